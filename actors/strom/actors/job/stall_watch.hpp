#pragma once
// The stall watch's judgement (Horovod's stall inspector, per frame origin): when a node's
// steps stand still longer than timing::stall_warning, the job_master asks every node what
// its workers do (worker_activity) and names the node the waiting workers wait for, what it
// last did and for how long. A worker waits for an origin when the staleness bound holds its
// next step on that origin's clock, or when it finished its share and the origin's drain
// marker has not come. The node most waited for is the one to name; a node that does not
// answer (stopped, hung, or busy in a long step) is named when nobody's waits say more.
// Pure, so it is tested without actors.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strom/actors/messages.hpp"

namespace strom::actors {

/// Time a node agent gives its trainers to answer the stall watch: a parked trainer answers
/// at once, one in a step after the step (milliseconds for strom's models).
inline constexpr auto trainer_activity_limit = std::chrono::milliseconds(500);
/// Time the job_master gives a node to answer: the trainers' limit and a round trip to
/// spare; a node silent this long counts as not answering (stopped or hung).
inline constexpr auto node_activity_limit = std::chrono::milliseconds(1000);

/// One node of the job as the stall watch sees it.
struct stalled_node {
  std::uint64_t node_id = 0;
  std::string node;               ///< "node 3 (w2 at 10.0.0.2)"
  std::uint32_t round = 0;        ///< the round under way
  std::uint64_t steps = 0;        ///< the node's steps in the round, as last reported
  double quiet_seconds = 0.0;     ///< since its reported steps last grew
  std::optional<node_activity> answer;  ///< nullopt: no answer (yet)
};

/// Whom the job waits for.
struct stall_finding {
  std::uint64_t node_id = 0;
  std::size_t waiting_workers = 0;  ///< workers (of any node) whose waits name it
  /// E.g. "waiting for node 2 (w2 at 10.0.0.2): it does not answer (stopped or hung); it
  /// last reported step 340 of round 1, 12.3 s ago; 2 workers wait for it".
  std::string text;
};

/// The node to name, or nullopt when nobody waits for anyone and every node answered (all
/// busy in their steps: slow, not stalled).
std::optional<stall_finding> stall_verdict(const std::vector<stalled_node>& nodes);

} // namespace strom::actors
