#include "strom/actors/kv_node_sum.hpp"

#include <stdexcept>

namespace strom::actors {

kv_node_sum::kv_node_sum(std::size_t elements) : sum_(elements, 0.0f) {}

void kv_node_sum::add(std::span<const float> gradient) {
  if (gradient.size() != sum_.size())
    throw std::invalid_argument("kv_node_sum: a gradient of the wrong size");
  std::lock_guard<std::mutex> guard{mutex_};
  for (std::size_t i = 0; i < sum_.size(); ++i)
    sum_[i] += gradient[i];
}

} // namespace strom::actors
