#pragma once
// What job_master tests share: the timeouts of their job masters, and what a node tells a
// job_master when it finished a round, as the tests play the nodes.

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "strom/actors/messages.hpp"
#include "strom/actors/timing.hpp"

namespace strom::testing {

/// A tested job_master's timeouts: a paused job and a restore wait 10 s, preparing never
/// times out (named, not positional: timing has many fields).
inline actors::timing job_test_timeouts() {
  actors::timing timeouts;
  timeouts.rejoin_timeout = std::chrono::seconds(10);
  timeouts.restore_timeout = std::chrono::seconds(10);
  timeouts.prepare_timeout = std::chrono::hours(24);
  return timeouts;
}

/// Node `node_id` of job `job_id` finished `round`, having trained `samples` in batches of 10
/// (`steps`: its workers' steps, empty when it finished its work).
inline actors::node_epoch_report round_done(std::uint64_t job_id, std::uint64_t node_id,
                                            std::uint32_t round, std::uint64_t samples,
                                            std::vector<std::uint64_t> steps = {}) {
  actors::node_epoch_report r;
  r.job_id = job_id;
  r.node_id = node_id;
  r.round = round;
  r.totals = {5.0, samples / 10, samples, 1.0};
  r.steps = std::move(steps);
  return r;
}

} // namespace strom::testing
