#pragma once
// Inverted dropout: training zeroes each activation with probability `rate` and scales the
// kept ones by 1 / (1 - rate), so inference is the identity with no rescaling.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/workspace.hpp"

namespace strom::compute {

/// Inverted dropout with its own generator, so masks repeat from the seed alone.
class dropout final : public layer {
public:
  /// Drops with probability `rate` in [0, 1); throws std::invalid_argument otherwise.
  dropout(shape input, float rate, std::uint64_t seed);

  /// "dropout".
  std::string kind() const override;
  /// The input shape.
  shape output_shape() const override;
  /// The probability of dropping an activation.
  float rate() const noexcept { return rate_; }

  /// Sizes the mask for max_batch samples.
  void reserve(std::size_t max_batch) override;
  /// The mask's bytes for max_batch samples.
  std::size_t workspace_bytes(std::size_t max_batch) const override;
  /// Training: out = in * mask with a fresh mask of 0 and 1 / (1 - rate); inference: a copy.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// din = dout * mask of the last training forward of `rows`.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  shape shape_;
  float rate_;
  rng gen_;
  workspace<float> mask_;
};

} // namespace strom::compute
