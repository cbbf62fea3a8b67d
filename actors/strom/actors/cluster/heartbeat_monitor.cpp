#include "strom/actors/cluster/heartbeat_monitor.hpp"

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "strom/actors/messages.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

using monitor_actor = caf::stateful_actor<heartbeat_state>;

long long timeout_ms(const heartbeat_setup& setup) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(setup.timeout).count();
}

/// Tells the scheduler once and ends the monitor: after quit() no handler runs again.
void report_hung(monitor_actor* self, const heartbeat_setup& setup, std::string reason) {
  log::warning("heartbeat: {}", reason);
  self->send(setup.scheduler, node_hung_atom_v, setup.node_id, std::move(reason));
  self->quit();
}

/// Sends the next ping and schedules the check of its answer.
void ping(monitor_actor* self, const heartbeat_setup& setup) {
  // A plain send, not a request: CAF 0.17.6's request() drops the priority argument (the
  // request arrives as a normal message), so the timeout is tracked here instead.
  self->send<caf::message_priority::high>(setup.node_agent, ping_atom_v);
  self->delayed_send(self, setup.timeout, caf::timeout_atom_v, self->state.pings_sent);
  ++self->state.pings_sent;
  if (setup.metrics)
    self->state.unanswered.push_back(self->clock().now());
}

} // namespace

caf::behavior heartbeat_monitor(monitor_actor* self, heartbeat_setup setup) {
  const auto agent = setup.node_agent.address();
  self->monitor(setup.node_agent);
  self->set_down_handler([self, agent](const caf::down_msg& down) {
    if (down.source == agent)
      self->quit();
  });
  // An error answer arrives here, not in the behavior; CAF's default would quit with the
  // error as exit reason, which the linked scheduler would take as a crash of this monitor.
  self->set_error_handler([self, setup, agent](caf::error& failure) {
    if (self->current_sender() == agent)
      report_hung(self, setup,
                  fmt::format("node {}: heartbeat answered with an error within {} ms: {}",
                              setup.node_id, timeout_ms(setup), self->system().render(failure)));
  });
  ping(self, setup);
  self->delayed_send(self, setup.interval, caf::tick_atom_v);
  return {
    [self, setup](caf::tick_atom) {
      ping(self, setup);
      self->delayed_send(self, setup.interval, caf::tick_atom_v);
    },
    [self, setup, agent](pong_atom) {
      if (self->current_sender() != agent)
        return;
      auto& st = self->state;
      ++st.pongs_received;
      // Pongs come in the order of the pings: this one answers the oldest in flight.
      if (setup.metrics && !st.unanswered.empty()) {
        setup.metrics->heartbeat(setup.node, std::chrono::duration<double>(
                                               self->clock().now() - st.unanswered.front())
                                               .count());
        st.unanswered.pop_front();
      }
    },
    [self, setup](caf::timeout_atom, std::uint64_t ping_number) {
      if (self->state.pongs_received <= ping_number)
        report_hung(self, setup,
                    fmt::format("node {}: no heartbeat answer within {} ms", setup.node_id,
                                timeout_ms(setup)));
    },
  };
}

} // namespace strom::actors
