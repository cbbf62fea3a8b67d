#pragma once
// Parameter averaging (Deeplearning4j's parameter averaging and ParallelWrapper's AVERAGING
// mode) on the gradient-sharing transport. A worker trains alone between averages. At every
// `frequency`-th step of a round, and at the round's last common step (round_work), each
// worker adds [1, its parameters, its updater state] into its node's sum (node_average.hpp;
// the leading 1 a weight, so that a sum carries its count). A node alone in the round
// continues from its sum divided by the weight. Otherwise the node's last worker to add
// publishes the sum to its relay, the relays reduce the sums along a tree of the nodes
// (average_reduction.hpp), and each worker continues from the total the tree's root sends
// down, divided by its weight: every replica is then the same after each average. Every
// worker still frames an empty update each step (its clock), which the other workers' bounded
// staleness and a lost node's count go by, and which tells a node's workers that their sum is
// complete.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "strom/actors/messages.hpp"
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

/// Writes `scale` times the contribution elements [first, first + n) that `segment` holds (n
/// little-endian floats) over their places in `parameters` and then `updater_state`; the weight
/// (element 0) has no place.
void scale_segment_into(std::span<const std::byte> segment, std::size_t first, float scale,
                        std::span<float> parameters, std::span<float> updater_state);

/// Writes the average of a whole `sum` (its weight first, like a contribution) over
/// `parameters` and, when `sum` holds them too, `updater_state`.
void take_average_of(std::span<const std::byte> sum, std::span<float> parameters,
                     std::span<float> updater_state);

/// One trainer's averages of its round: the next it contributes to, and the totals the relay
/// sent of those it waits for (in segments of average_segment_elements).
class averaging_totals {
public:
  /// Totals of `elements` elements (contribution_elements).
  explicit averaging_totals(std::size_t elements) : elements_(elements) {}

  /// Starts round `round`: its first average is index 0; totals of other rounds are dropped.
  void start_round(std::uint32_t round);

  /// The index of the round's next average this worker contributes to.
  std::uint64_t next_index() { return next_++; }

  /// Keeps a segment of a total of the current round (one of another round is dropped);
  /// refuses one that is no segment of a sum of this model's contributions.
  result<void> add(const average_total& total);

  /// Whether every segment of the total of average `index` of the current round came.
  bool complete(std::uint64_t index) const;

  /// Writes the average of `index` (complete) over `parameters` and, if averaged,
  /// `updater_state`; drops that total and older ones.
  void take(std::uint64_t index, std::span<float> parameters, std::span<float> updater_state);

private:
  std::size_t elements_;
  std::uint32_t round_ = 0;
  std::uint64_t next_ = 0;
  /// Of the current round, by index and then offset.
  std::map<std::uint64_t, std::map<std::uint64_t, shared_frame>> totals_;
  compute::frame_workspace workspace_;
};

} // namespace strom::actors
