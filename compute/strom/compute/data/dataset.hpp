#pragma once
// A classification dataset held in memory: one flat feature buffer and one label per sample.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/shape.hpp"

namespace strom::compute {

/// Labels at or above this are rejected by the readers: far above any classification dataset
/// (ImageNet-21k has 21841 classes), it keeps a corrupt label from sizing a class buffer.
inline constexpr std::size_t max_classes = std::size_t{1} << 20;

/// Samples of one shape with integer class labels in [0, classes).
struct dataset {
  shape sample_shape;                ///< shape of one sample
  std::size_t classes = 0;           ///< number of classes; labels lie in [0, classes)
  std::vector<float> features;       ///< size() * sample_shape.size() floats, sample-major
  std::vector<std::int32_t> labels;  ///< one label per sample

  /// Number of samples.
  std::size_t size() const noexcept;
  /// The features of sample `index` (index < size()).
  std::span<const float> sample(std::size_t index) const noexcept;
};

/// Max label + 1, at least 1; `labels` must be non-negative.
std::size_t class_count(std::span<const std::int32_t> labels) noexcept;

} // namespace strom::compute
