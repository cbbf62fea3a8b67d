#pragma once
// A kvstore node's mean of its workers' gradients of one step (MXNet's local aggregation):
// each worker computes its gradient into its own replica and tells the node's first trainer,
// which reads the gradients of the workers a step carries, in slot order, and pushes their
// mean for the whole node, then hands the shards' answers on. Its workers then push one frame
// a node instead of one each, and the mean is the same to the bit in every run (a sum in the
// order the workers finish would not be with three or more).
// Safe without a lock: a worker writes its gradient before it says so (a message), and
// writes it again only after the answer to that step, which goes out after the mean is taken.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strom::actors {

/// The node's workers' gradient buffers, and the mean of a step's.
class kv_node_sum {
public:
  /// The gradient buffers of the node's workers, by slot (each the model's size).
  explicit kv_node_sum(std::vector<std::span<const float>> gradients);

  /// Calls `use` with the mean of the gradients of `slots` (in slot order, at least one).
  /// Only the node's first trainer calls it, once every one of them computed the step's.
  template <class Use>
  void take_mean(const std::vector<std::uint32_t>& slots, Use&& use) {
    sum_slots(slots);
    use(std::span<const float>{mean_});
  }

private:
  // mean_ = the gradients of `slots`, added in slot order, over their number.
  void sum_slots(const std::vector<std::uint32_t>& slots);

  std::vector<std::span<const float>> gradients_;
  std::vector<float> mean_;
};

} // namespace strom::actors
