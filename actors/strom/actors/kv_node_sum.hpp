#pragma once
// A kvstore node's sum of its workers' gradients of one step (MXNet's local aggregation),
// shared by its trainers like the node's framer (thread-safe adds): each trainer adds its
// gradient and tells the node's first trainer, which pushes the mean for the whole node and
// hands the shards' answers on. Its workers then push one frame a node instead of one each.

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

namespace strom::actors {

/// The gradients a node's workers added for the step the node pushes next.
class kv_node_sum {
public:
  /// A zero sum of `elements` floats (the model's).
  explicit kv_node_sum(std::size_t elements);

  /// Adds a worker's gradient (elements() floats; throws std::invalid_argument otherwise).
  void add(std::span<const float> gradient);

  /// Turns the sum of `weight` gradients into their mean and calls `use` with it, then clears
  /// the sum for the next step. Only the node's first trainer calls it, once every worker of
  /// the step added (they add to the next step only after its answer).
  template <class Use>
  void take_mean(std::size_t weight, Use&& use) {
    std::lock_guard<std::mutex> guard{mutex_};
    const float scale = 1.0f / static_cast<float>(weight);
    for (auto& value : sum_)
      value *= scale;
    use(std::span<const float>{sum_});
    std::fill(sum_.begin(), sum_.end(), 0.0f);
  }

  std::size_t elements() const noexcept { return sum_.size(); }

private:
  std::mutex mutex_;
  std::vector<float> sum_;
};

} // namespace strom::actors
