#pragma once
// The job_master's stall watch (job_stall.cpp; stall_watch.hpp has the judgement): what it
// keeps of the nodes' progress and its inquiry, and its steps.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

#include <caf/actor_clock.hpp>

#include "strom/actors/job/job_master_fwd.hpp"
#include "strom/actors/protocol/job_control.hpp"
#include "strom/actors/protocol/reports.hpp"

namespace strom::actors {

/// What the stall watch keeps while a job runs.
struct stall_watch_state {
  /// When each node's reported steps last grew (or the round started), for the stall watch.
  std::map<std::uint64_t, caf::actor_clock::time_point> progressed_at;
  /// The stall watch's inquiry in flight: the answers so far, by node (nullopt: none came).
  std::map<std::uint64_t, std::optional<node_activity>> inquiry;
  std::size_t inquiry_pending = 0;  ///< nodes whose answer is awaited
  /// The node the stall watch named last (logged once per stall), while it holds.
  std::optional<std::uint64_t> stalled_on;
  caf::actor_clock::time_point stalled_since;  ///< when the steps stood still
};

} // namespace strom::actors

namespace strom::actors::job_steps {

/// Notes a node's progress report: the stall watch counts stillness from its last growth.
void note_progress(self_ptr self, const node_progress& progress);

/// The stall watch's tick: asks the nodes what their workers do once a node's steps stood
/// still for stall_warning, and judges their answers; it clears the verdict once all move.
void watch_stalls(self_ptr self, const job_master_setup& setup);

} // namespace strom::actors::job_steps
