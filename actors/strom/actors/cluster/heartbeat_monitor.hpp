#pragma once
// The heartbeat monitor: finds HUNG nodes. The scheduler spawns one per joined node, linked to
// itself. A crashed node is seen through the down_msg of its node_agent, which the scheduler
// monitors itself; a frozen one keeps its connection open and never sends that, so this actor
// pings the agent and reports the node when a ping goes unanswered.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/job/metrics_sink.hpp"

namespace strom::actors {

/// What a heartbeat monitor watches and whom it tells.
struct heartbeat_setup {
  std::uint64_t node_id = 0;  ///< the node's id in the cluster, for the report
  pingable_actor node_agent;       ///< answers (ping_atom) with pong_atom
  hung_reporter_actor scheduler;   ///< told (node_hung_atom, node_id, std::string reason)
  caf::timespan interval{};   ///< time between pings
  caf::timespan timeout{};    ///< no pong for this long: the node is hung
  std::string node;           ///< its name, as metrics show it
  std::shared_ptr<metrics_sink> metrics;  ///< told each round trip; null: nobody watches
};

/// A heartbeat monitor's state.
struct heartbeat_state {
  std::uint64_t pings_sent = 0;
  std::uint64_t pongs_received = 0;  ///< the agent answers in order: ping n is answered
                                     ///< once this exceeds n
  std::deque<caf::actor_clock::time_point> unanswered;  ///< send times of pings in flight

  static inline const char* name = "strom.heartbeat_monitor";
};

/// Pings `setup.node_agent` now and every `setup.interval` at high priority, so a ping
/// overtakes queued messages. The first ping without a pong within `setup.timeout` (or an
/// error answer) sends (node_hung_atom, node_id, reason) to `setup.scheduler` once, and the
/// monitor quits. When the agent goes down the monitor quits without a report: the scheduler
/// sees the agent's down_msg itself.
caf::behavior heartbeat_monitor(caf::stateful_actor<heartbeat_state>* self,
                                heartbeat_setup setup);

} // namespace strom::actors
