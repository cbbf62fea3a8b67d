#include "strom/actors/relay.hpp"

#include <algorithm>

#include "strom/log.hpp"

namespace strom::actors {

namespace {

void forget(std::vector<caf::actor>& handles, const caf::actor_addr& gone) {
  handles.erase(std::remove_if(handles.begin(), handles.end(),
                               [&](const caf::actor& h) { return h.address() == gone; }),
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

/// Validates, de-duplicates and forwards a frame.
void relay_frame(caf::stateful_actor<relay_state>* self, const shared_frame& incoming,
                 bool local) {
  auto& st = self->state;
  auto view = compute::read_update_frame(incoming.value, st.workspace);
  if (!view) {
    ++st.stats.frames_rejected;
    log::warning("relay: dropped a frame of {} bytes: {}", incoming.value.size(),
                 view.err().message);
    return;
  }
  if (!st.seen.insert(view->header.origin_node, view->header.sequence)) {
    ++st.stats.duplicates_dropped;
    return;
  }
  ++st.stats.frames_forwarded;
  forward(self, incoming, local);
}

/// De-duplicates and forwards a drain marker.
void relay_marker(caf::stateful_actor<relay_state>* self, const drain_marker& marker,
                  bool local) {
  // Markers of one origin come in epoch order: an older one came over another path.
  auto& drained = self->state.drained[marker.origin];
  if (marker.epoch < drained)
    return;
  drained = marker.epoch + 1;
  forward(self, marker, local);
}

} // namespace

caf::behavior relay(caf::stateful_actor<relay_state>* self) {
  self->set_down_handler([self](const caf::down_msg& down) {
    forget(self->state.subscribers, down.source);
    forget(self->state.peers, down.source);
  });
  return {
    [self](const shared_frame& incoming) { relay_frame(self, incoming, false); },
    [self](const drain_marker& marker) { relay_marker(self, marker, false); },
    [self](publish_atom, const shared_frame& incoming) { relay_frame(self, incoming, true); },
    [self](publish_atom, const drain_marker& marker) { relay_marker(self, marker, true); },
    [self](subscribe_atom, const caf::actor& subscriber) {
      self->monitor(subscriber);
      self->state.subscribers.push_back(subscriber);
    },
    [self](add_peer_atom, const caf::actor& peer) {
      self->monitor(peer);
      self->state.peers.push_back(peer);
    },
    [self](stats_atom) { return self->state.stats; },
  };
}

} // namespace strom::actors
