#pragma once
// Parameter averaging (Deeplearning4j's parameter averaging and ParallelWrapper's AVERAGING
// mode) on the gradient-sharing transport. A worker trains alone between averages; at every
// `frequency`-th step of a round, and at the round's last common step (round_work), it frames
// a contribution: one dense fp32 frame of [1, its parameters, its updater state], the leading
// 1 a weight, so that a sum of contributions carries its count. The frame travels like every
// update frame (siblings, relays, mesh repair, de-duplication). Each worker adds each
// contribution into the sum of its index (a worker's k-th contribution of a round goes with
// everyone's k-th) and, once every member worker's k-th has come, continues from the sum
// divided by its weight. All workers sum the same contributions, so the replicas are equal
// after each average (up to summation order). A lost origin's workers are no longer waited
// for; what of theirs arrived before counts where it arrived. Every node receives every
// worker's contribution (an all-gather over the topology's tree, not a reduction along it):
// the bytes a node receives grow with the workers.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// Parameter averaging settings (distributed.mode averaging).
struct averaging_options {
  std::uint32_t frequency = 0;  ///< steps between averages; 0: share updates instead
  bool updaters = true;         ///< average the updater state too
};

/// Elements of a contribution: the weight, the parameters and, when averaged, the updater state.
std::size_t contribution_elements(std::size_t parameters, std::size_t updater_state,
                                  const averaging_options& options);

/// Whether a worker that has taken `step` of a round's `common_steps` (round_work) contributes.
bool contributes_at(std::uint64_t step, std::uint64_t common_steps,
                    const averaging_options& options);

/// One trainer's sums of the contributions of the current round (and of the next: a faster
/// node may start it first), by index.
class averaging_sums {
public:
  /// Sums of contributions of `elements` elements (contribution_elements).
  explicit averaging_sums(std::size_t elements) : elements_(elements) {}

  /// Starts round `round`, whose contributions come from `workers[i]` workers of
  /// `origins[i]`; sums of earlier rounds are dropped.
  void start_round(std::uint32_t round, const std::vector<std::uint64_t>& origins,
                   const std::vector<std::uint32_t>& workers);

  /// Adds the next contribution of `origin`'s worker `worker` in `round`, its elements
  /// `values`; returns its index, or nothing for a late one of an earlier round (dropped).
  /// Refuses a non-member worker, a wrong size, a round past the next, and a worker more than
  /// one average ahead of the oldest open one (a legitimate worker cannot be: it waits for
  /// each average before its next contribution), so a peer cannot make it hold more sums.
  result<std::optional<std::uint64_t>> add(std::uint64_t origin, std::uint32_t worker,
                                           std::uint32_t round, std::span<const float> values);

  /// The same for a received frame, which must hold a whole contribution as dense fp32.
  result<std::optional<std::uint64_t>> add(const compute::update_frame_view& frame);

  /// Counts the trainer's own next contribution in `round` without its values: they stay in
  /// its replica, which does not change until it takes the average (take() adds them then,
  /// saving a pass over a whole model). Returns its index.
  result<std::optional<std::uint64_t>> add_own(std::uint64_t origin, std::uint32_t worker,
                                               std::uint32_t round);

  /// Stops waiting for `origin`'s workers (the origin was lost).
  void forget(std::uint64_t origin);

  /// Whether every member worker's contribution to `index` of the current round has come.
  bool complete(std::uint64_t index) const;

  /// Writes the average of `index` of the current round (complete) over `parameters` and,
  /// if averaged, over `updater_state` (which hold the trainer's own contribution if it was
  /// counted by add_own), and drops its sum.
  void take(std::uint64_t index, std::span<float> parameters, std::span<float> updater_state);

  /// Elements of a contribution.
  std::size_t elements() const noexcept { return elements_; }

private:
  struct open_sum {
    std::vector<float> sum;  // empty until a contribution with values came
    bool own = false;        // the trainer's own contribution counts (add_own)
    std::map<std::uint64_t, std::uint32_t> came;  // per origin: contributions added
  };
  struct round_sums {
    std::map<std::uint64_t, std::uint32_t> members;  // per live origin: its workers
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> next;  // per worker
    std::map<std::uint64_t, open_sum> open;  // by index
    std::uint64_t taken = 0;  // averages taken: the oldest index that may be open
  };

  // Checks and counts a contribution; `add_into` adds its values to the sum, and an empty one
  // counts the trainer's own (add_own).
  result<std::optional<std::uint64_t>> add_with(
    std::uint64_t origin, std::uint32_t worker, std::uint32_t round,
    const std::function<result<void>(std::span<float>)>& add_into);

  std::size_t elements_;
  std::uint32_t round_ = 0;
  std::map<std::uint32_t, round_sums> rounds_;  // the current round and maybe the next
  // Buffers of sums taken, reused: a fresh whole-model buffer per average costs its page
  // faults (measured: 1-2% of a 2-worker run's time in the kernel's page zeroing).
  std::vector<std::vector<float>> spare_;
};

} // namespace strom::actors
