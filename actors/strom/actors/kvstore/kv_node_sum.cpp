#include "strom/actors/kvstore/kv_node_sum.hpp"

#include <algorithm>
#include <stdexcept>

namespace strom::actors {

kv_node_sum::kv_node_sum(std::vector<std::span<const float>> gradients)
    : gradients_(std::move(gradients)) {
  if (gradients_.empty())
    throw std::invalid_argument("kv_node_sum: no workers");
  for (const auto& gradient : gradients_)
    if (gradient.size() != gradients_.front().size())
      throw std::invalid_argument("kv_node_sum: workers' gradients of different sizes");
  mean_.resize(gradients_.front().size());
}

void kv_node_sum::sum_slots(const std::vector<std::uint32_t>& slots) {
  const auto& first = gradients_.at(slots.front());
  std::copy(first.begin(), first.end(), mean_.begin());
  for (std::size_t k = 1; k < slots.size(); ++k) {
    const auto& gradient = gradients_.at(slots[k]);
    for (std::size_t i = 0; i < mean_.size(); ++i)
      mean_[i] += gradient[i];
  }
  const float scale = 1.0f / static_cast<float>(slots.size());
  for (auto& value : mean_)
    value *= scale;
}

} // namespace strom::actors
