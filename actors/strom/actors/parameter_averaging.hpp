#pragma once
// Parameter averaging (Deeplearning4j's parameter averaging and ParallelWrapper's AVERAGING
// mode) on the gradient-sharing transport. A worker trains alone between averages. At every
// `frequency`-th step of a round, and at the round's last common step (round_work), each
// worker adds [1, its parameters, its updater state] into its node's sum (node_average.hpp;
// the leading 1 a weight, so that a sum carries its count), and the node's last worker to add
// frames that sum: one dense fp32 contribution a node an average (MXNet's local aggregation).
// The frame travels like every update frame (siblings, relays, mesh repair, de-duplication);
// for the siblings it only says that their node's sum is complete. Each worker adds every
// other node's contribution into the sum of its index (a node's k-th contribution of a round
// goes with every node's k-th) and, once every member node's k-th has come, continues from
// the remote sum plus its node's, divided by the weight. All workers sum the same
// contributions, so the replicas are equal after each average (up to summation order). A lost
// node is no longer waited for; what of it arrived before counts where it arrived. Every node
// receives every other node's contribution (an all-gather over the topology's tree, not a
// reduction along it): the bytes a node receives grow with the nodes.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
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

/// One trainer's sums of the other nodes' contributions of the current round (and of the
/// next: a faster node may start it first), by index, and which nodes each still waits for.
class averaging_sums {
public:
  /// Sums of contributions of `elements` elements (contribution_elements).
  explicit averaging_sums(std::size_t elements) : elements_(elements) {}

  /// Starts round `round`, whose contributions come from `origins` (one a node an average);
  /// sums of earlier rounds are dropped.
  void start_round(std::uint32_t round, const std::vector<std::uint64_t>& origins);

  /// Adds a received contribution (a dense fp32 frame of a whole contribution); returns its
  /// index, or nothing for a late one of an earlier round (dropped). Refuses a non-member
  /// node, a wrong size, a round past the next, and a node more than one average ahead of the
  /// oldest open one (a legitimate node cannot be: its workers wait for each average before
  /// the next), so a peer cannot make it hold more sums. The payload is checked before
  /// anything is added.
  result<std::optional<std::uint64_t>> add(const compute::update_frame_view& frame);

  /// Counts the next contribution of the trainer's own node `origin` in `round` without its
  /// values: they are in the node's sum (node_average.hpp). Returns its index.
  result<std::optional<std::uint64_t>> add_own(std::uint64_t origin, std::uint32_t round);

  /// Stops waiting for `origin` (the node was lost).
  void forget(std::uint64_t origin);

  /// Whether every member node's contribution to `index` of the current round has come.
  bool complete(std::uint64_t index) const;

  /// Writes the average of `index` of the current round (complete) over `parameters` and, if
  /// averaged, `updater_state`: the other nodes' sum plus `own_sum`, the trainer's node's
  /// (its weight first, like a contribution), divided by their weight. Drops the index's sum.
  void take(std::uint64_t index, std::span<const float> own_sum, std::span<float> parameters,
            std::span<float> updater_state);

private:
  struct open_sum {
    std::vector<float> sum;  // the other nodes' contributions; empty until one came
    std::set<std::uint64_t> came;  // nodes whose contribution came
  };
  struct round_sums {
    std::vector<std::uint64_t> members;  // live nodes of the round
    std::map<std::uint64_t, std::uint64_t> next;  // per node: the index of its next
    std::map<std::uint64_t, open_sum> open;  // by index
    std::uint64_t taken = 0;  // averages taken: the oldest index that may be open
  };

  // Checks and counts a contribution of `origin`; `add_into` adds its values to the sum, and
  // an empty one counts the trainer's own node (add_own).
  result<std::optional<std::uint64_t>> add_with(
    std::uint64_t origin, std::uint32_t round,
    const std::function<result<void>(std::span<float>)>& add_into);

  std::size_t elements_;
  std::uint32_t round_ = 0;
  std::map<std::uint32_t, round_sums> rounds_;  // the current round and maybe the next
  // Buffers of sums taken, reused: a fresh whole-model buffer per average costs its page
  // faults (measured: 1-2% of a 2-worker run's time in the kernel's page zeroing).
  std::vector<std::vector<float>> spare_;
};

} // namespace strom::actors
