#include "strom/actors/cluster/node_agent_steps.hpp"

#include "strom/actors/error_text.hpp"

namespace strom::actors::agent_steps {

namespace {

/// Connects to the job's mesh parent's relay on a thread aside (connecting blocks); the agent
/// then asks that relay to add ours (wired). An update not newer than the one wired is
/// answered at once, unapplied: an older plan never undoes a newer one.
void wire(self_ptr self, const node_agent_setup& setup, const topology_update& update,
          caf::response_promise promise) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != update.job_id || !setup.connect_relay) {
    promise.deliver(make_error(strom_error::bad_job,
                               fmt::format("node {} cannot join job {}'s mesh now", st.node_id,
                                           update.job_id)));
    return;
  }
  if (update.version <= st.run->topology_version) {
    promise.deliver(wired_atom_v);
    return;
  }
  st.pending_wire = promise;
  st.wiring_update = update;
  auto slot = std::make_shared<std::optional<result<relay_link>>>();
  st.wiring = slot;
  run_aside(self, [slot, endpoint = update.parent_endpoint, job_id = update.job_id,
                   connect = setup.connect_relay](caf::blocking_actor* helper,
                                                  const caf::actor& agent) {
    slot->emplace(guarded<relay_link>([&] { return connect(endpoint); }));
    helper->send(agent, wired_atom_v, job_id);
  });
}

/// Whether `update` comes after `than`: a later job's, or a newer plan of the same job.
bool newer(const topology_update& update, const topology_update& than) {
  return update.job_id != than.job_id || update.version > than.version;
}

/// The wiring in progress ended: the queued update is wired next; once none waits, the ones
/// it replaced are answered, their node's edge now as the newest plan wants it.
void wire_next(self_ptr self, const node_agent_setup& setup) {
  auto& st = self->state;
  if (st.next_wire) {
    auto next = std::move(*st.next_wire);
    st.next_wire.reset();
    wire(self, setup, next.update, std::move(next.promise));
    if (st.pending_wire)
      return;  // being wired; else it was answered at once
  }
  for (auto& promise : st.superseded_wires)
    promise.deliver(wired_atom_v);
  st.superseded_wires.clear();
}

/// The parent's relay answered whether it added ours (`link` empty: it did not, `why`): the
/// wiring in progress ends, and the next queued update is wired.
void finish_wire(self_ptr self, const node_agent_setup& setup, std::optional<relay_link> link,
                 const std::string& why) {
  auto& st = self->state;
  if (!st.pending_wire)
    return;
  auto promise = std::move(*st.pending_wire);
  st.pending_wire.reset();
  if (!st.run || st.run->job_id != st.wiring_update.job_id) {
    promise.deliver(make_error(strom_error::job_cancelled,
                               fmt::format("job {} was stopped", st.wiring_update.job_id)));
  } else if (!link) {
    promise.deliver(make_error(strom_error::node_failed, "its relay did not add ours: " + why));
  } else {
    self->send(st.run->actors.relay, add_peer_atom_v, link->remote, st.wiring_update.resend);
    st.run->relay_links.push_back(std::move(link->connection));
    st.run->topology_version = st.wiring_update.version;
    promise.deliver(wired_atom_v);
  }
  wire_next(self, setup);
}

} // namespace

void take_update(self_ptr self, const node_agent_setup& setup, const topology_update& update) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  if (!st.pending_wire)
    return wire(self, setup, update, std::move(promise));
  if (!newer(update, st.wiring_update)
      || (st.next_wire && !newer(update, st.next_wire->update))) {
    st.superseded_wires.push_back(std::move(promise));
    return;
  }
  if (st.next_wire)
    st.superseded_wires.push_back(std::move(st.next_wire->promise));
  st.next_wire = queued_update{update, std::move(promise)};
}

void wired(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id) {
  auto& st = self->state;
  if (auto done = take_aside_outcome(self, st.pending_wire, st.wiring, job_id)) {
    // Connected: still wiring until the parent's relay added ours, which it does before it
    // answers, so its first frame finds us.
    auto& [promise, link] = *done;
    st.pending_wire = std::move(promise);
    self->request(link.remote, setup.timeouts.answer_timeout, wire_atom_v, st.run->actors.relay,
                  st.wiring_update.resend)
      .then(
        [self, setup, link = link](wired_atom) { finish_wire(self, setup, link, {}); },
        [self, setup](const caf::error& err) {
          finish_wire(self, setup, std::nullopt, error_text(self->system(), err));
        });
    return;
  }
  if (!st.pending_wire)
    wire_next(self, setup);
}

} // namespace strom::actors::agent_steps
