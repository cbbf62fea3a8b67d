#include "strom/compute/data/dataset.hpp"

#include <algorithm>

namespace strom::compute {

std::size_t dataset::size() const noexcept {
  return labels.size();
}

std::span<const float> dataset::sample(std::size_t index) const noexcept {
  const std::size_t floats = sample_shape.size();
  return {features.data() + index * floats, floats};
}

std::size_t class_count(std::span<const std::int32_t> labels) noexcept {
  if (labels.empty())
    return 1;
  return static_cast<std::size_t>(*std::max_element(labels.begin(), labels.end())) + 1;
}

} // namespace strom::compute
