#include "strom/actors/sharing/relay.hpp"

#include <algorithm>
#include <type_traits>

#include "strom/compute/frames/update_frame.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

template <class Handle>
void forget(std::vector<Handle>& handles, const caf::actor_addr& gone) {
  handles.erase(std::remove_if(handles.begin(), handles.end(),
                               [&](const Handle& h) { return h.address() == gone; }),
                handles.end());
}

/// Hands `message` to every peer except the current sender and, unless a local trainer
/// published it (and so gave it to the node's trainers itself), to every subscriber.
template <class Message>
void forward(caf::stateful_actor<relay_state>* self, const Message& message, bool local) {
  if (!local)
    for (const auto& subscriber : self->state.subscribers)
      self->send(subscriber, message);
  const auto from = self->current_sender();
  for (const auto& peer : self->state.peers)
    if (peer.address() != from)
      self->send(peer, message);
}

/// Keeps a message of round `round` for a mesh repair: a newer round replaces the kept one,
/// an older one (a lost node's late frame) is not kept.
void keep(relay_state& st, kept_message message, std::uint32_t round) {
  if (!st.keeps_round || round < st.kept_round)
    return;
  if (round > st.kept_round || st.kept.empty()) {
    st.kept.clear();
    st.kept_round = round;
  }
  st.kept.push_back(std::move(message));
}

/// The peer the current message came from; null if it is none.
relay_peer_actor sending_peer(caf::stateful_actor<relay_state>* self) {
  const auto from = self->current_sender();
  for (const auto& peer : self->state.peers)
    if (peer.address() == from)
      return peer;
  return {};
}

/// Sends what the reduction of averages asks for (average_reduction.hpp): partial sums to the
/// parent, totals out to the trainers and every neighbour (but the sender, when it sent this
/// total), or back to the sender.
void dispatch(caf::stateful_actor<relay_state>* self, reduction_sends sends,
              bool from_sender = false) {
  auto& st = self->state;
  for (auto& part : sends.up)
    if (st.parent) {
      st.stats.averaging_bytes += part.sum.value.size();
      self->send(st.parent, std::move(part));
    }
  const auto from = self->current_sender();
  for (const auto& total : sends.out) {
    // The neighbours first: their copy has the longer way to go.
    for (const auto& peer : st.peers)
      if (!from_sender || peer.address() != from) {
        st.stats.averaging_bytes += total.sum.value.size();
        self->send(peer, total);
      }
    for (const auto& subscriber : st.subscribers)
      self->send(subscriber, total);
  }
  if (const auto sender = sending_peer(self))
    for (const auto& total : sends.back) {
      st.stats.averaging_bytes += total.sum.value.size();
      self->send(sender, total);
    }
}

/// Adds a peer; a mesh edge makes the relay keep its rounds and, with `resend`, the peer first
/// gets what was kept of this one. A mesh edge also gets the last totals of averages taken.
void add_peer(caf::stateful_actor<relay_state>* self, const caf::actor& added, bool mesh_edge,
              bool resend) {
  auto& st = self->state;
  const auto peer = caf::actor_cast<relay_peer_actor>(added);
  self->monitor(peer);
  st.peers.push_back(peer);
  st.keeps_round |= mesh_edge;
  if (resend)
    for (const auto& message : st.kept)
      std::visit([&](const auto& kept) { self->send(peer, kept); }, message.message);
  if (mesh_edge)
    for (const auto& total : st.averages.kept()) {
      st.stats.averaging_bytes += total.sum.value.size();
      self->send(peer, total);
    }
}

/// Adds the mesh parent: the open averages' partial sums go to it.
void add_parent(caf::stateful_actor<relay_state>* self, const caf::actor& parent, bool resend) {
  add_peer(self, parent, true, resend);
  self->state.parent = caf::actor_cast<relay_peer_actor>(parent);
  dispatch(self, self->state.averages.set_parent_linked(true));
}

/// Stops sending partial sums to a parent that is gone.
void lose_parent(caf::stateful_actor<relay_state>* self, const caf::actor_addr& gone) {
  auto& st = self->state;
  if (!st.parent || st.parent.address() != gone)
    return;
  st.parent = nullptr;
  dispatch(self, st.averages.set_parent_linked(false));
}

/// Whether the current message comes from a lost peer.
bool from_forgotten(caf::stateful_actor<relay_state>* self) {
  const auto& forgotten = self->state.forgotten;
  return std::find(forgotten.begin(), forgotten.end(), self->current_sender())
         != forgotten.end();
}

/// Counts a new frame in its origin's round (frame headers call rounds epochs).
void count(relay_state& st, const compute::frame_header& header) {
  auto& counted = st.counted[header.origin_node];
  if (counted.round != header.epoch || counted.frames.empty()) {
    counted = origin_frames{header.origin_node, header.epoch, {}, false};
  }
  if (counted.frames.size() <= header.worker)
    counted.frames.resize(header.worker + std::size_t{1});
  ++counted.frames[header.worker];
}

/// The count of `origin`'s latest round; from now on its frames and markers are dropped.
origin_frames forget_origin(caf::stateful_actor<relay_state>* self, std::uint64_t origin,
                            const caf::actor& peer) {
  auto& st = self->state;
  if (peer) {
    st.forgotten.push_back(peer.address());
    self->demonitor(peer);
    forget(st.peers, peer.address());
    lose_parent(self, peer.address());
  }
  origin_frames answer;
  answer.origin = origin;
  if (const auto counted = st.counted.find(origin); counted != st.counted.end())
    answer = counted->second;
  const auto drained = st.drained.find(origin);
  answer.drained = drained != st.drained.end() && drained->second > answer.round;
  return answer;
}

/// Validates, de-duplicates and forwards a frame.
void relay_frame(caf::stateful_actor<relay_state>* self, const shared_frame& incoming,
                 bool local) {
  auto& st = self->state;
  if (from_forgotten(self))
    return;
  if (!local)
    st.stats.bytes_received += incoming.value.size();
  // Only the header: a frame whose payload is damaged still goes on, so that its receivers,
  // which refuse the payload, learn that its origin took the step (a synchronous job would
  // wait for it for good otherwise: strom sim's corrupt_frames found it).
  const auto read = compute::read_update_frame_header(incoming.value);
  if (!read) {
    ++st.stats.frames_rejected;
    log::warning("relay: dropped a frame of {} bytes: {}", incoming.value.size(),
                 read.err().message);
    return;
  }
  const auto& header = *read;
  if (!st.seen.insert(header.origin_node, header.sequence)) {
    ++st.stats.duplicates_dropped;
    return;
  }
  count(st, header);
  keep(st, kept_message{incoming}, header.epoch);
  ++st.stats.frames_forwarded;
  forward(self, incoming, local);
  if (st.track)
    st.track->count(timeline_kind::relay_traffic, self->clock().now(), st.stats.bytes_received,
                    st.stats.frames_forwarded);
}

/// De-duplicates and forwards a drain marker.
void relay_marker(caf::stateful_actor<relay_state>* self, const drain_marker& marker,
                  bool local) {
  if (from_forgotten(self))
    return;
  // Markers of one origin come in round order: an older one came over another path.
  auto& drained = self->state.drained[marker.origin];
  if (marker.epoch < drained)
    return;
  drained = marker.epoch + 1;
  keep(self->state, kept_message{marker}, marker.epoch);
  forward(self, marker, local);
}

/// Takes a sum or total of an average from a peer: a sum only from a child (not the parent),
/// and neither from a lost or unknown peer.
template <class Message>
void take_from_peer(caf::stateful_actor<relay_state>* self, const Message& message) {
  auto& st = self->state;
  const auto sender = sending_peer(self);
  if (from_forgotten(self) || !sender)
    return;
  st.stats.bytes_received += message.sum.value.size();
  result<reduction_sends> sends = [&] {
    if constexpr (std::is_same_v<Message, average_part>) {
      if (sender == st.parent)
        return result<reduction_sends>{error{"a partial sum from the parent"}};
      return st.averages.from_child(message);
    } else {
      return st.averages.total(message);
    }
  }();
  if (!sends) {
    ++st.stats.frames_rejected;
    log::warning("relay: dropped an average's sum of {} bytes: {}", message.sum.value.size(),
                 sends.err().message);
    return;
  }
  dispatch(self, std::move(*sends), std::is_same_v<Message, average_total>);
}

} // namespace

caf::behavior relay(caf::stateful_actor<relay_state>* self) {
  self->set_down_handler([self](const caf::down_msg& down) {
    forget(self->state.subscribers, down.source);
    forget(self->state.peers, down.source);
    lose_parent(self, down.source);
  });
  return {
    [self](const shared_frame& incoming) { relay_frame(self, incoming, false); },
    [self](const drain_marker& marker) { relay_marker(self, marker, false); },
    [self](publish_atom, const shared_frame& incoming) { relay_frame(self, incoming, true); },
    [self](publish_atom, const drain_marker& marker) { relay_marker(self, marker, true); },
    [self](subscribe_atom, const caf::actor& subscriber) {
      self->monitor(subscriber);
      self->state.subscribers.push_back(caf::actor_cast<frame_sink_actor>(subscriber));
    },
    [self](add_peer_atom, const caf::actor& peer) { add_peer(self, peer, false, false); },
    [self](add_peer_atom, const caf::actor& peer, bool resend) {
      add_parent(self, peer, resend);
    },
    [self](wire_atom, const caf::actor& peer, bool resend) {
      add_peer(self, peer, true, resend);
      return wired_atom_v;
    },
    [self](const average_tree& tree) { dispatch(self, self->state.averages.set_tree(tree)); },
    [self](publish_atom, const average_part& part) {
      auto sends = self->state.averages.own(part);
      if (!sends)  // not finite: the model diverged, and no average can be taken
        return log::error("relay: its node's sum was refused: {}", sends.err().message);
      dispatch(self, std::move(*sends));
    },
    [self](const average_part& part) { take_from_peer(self, part); },
    [self](const average_total& total) { take_from_peer(self, total); },
    [self](stats_atom) { return self->state.stats; },
    [self](forget_atom, std::uint64_t origin, const caf::actor& peer) {
      return forget_origin(self, origin, peer);
    },
  };
}

caf::behavior traced_relay(caf::stateful_actor<relay_state>* self,
                           std::shared_ptr<timeline_track> track) {
  self->state.track = std::move(track);
  return relay(self);
}

} // namespace strom::actors
