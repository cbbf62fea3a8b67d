#pragma once
// Inverted dropout: training zeroes each activation with probability `rate` and scales the
// kept ones by 1 / (1 - rate), so inference is the identity with no rescaling. Mask element k
// of the layer's life is a hash of the seed and k (counter-based, as the device layer's), and
// the count of elements drawn is kept in the layer's state: checkpoints and snapshots carry
// it, so a resumed run draws the masks the uninterrupted run would have, and a pipeline stage
// that draws a minibatch's masks micro-batch by micro-batch, in row order, draws the whole
// network's.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/workspace.hpp"

namespace strom::compute {

/// Inverted dropout whose masks repeat from the seed and the count of elements drawn.
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
  /// The count of mask elements drawn, as two floats (below 2^24 each, so exact): low, high.
  std::size_t state_count() const override { return 2; }
  /// No mask drawn yet.
  void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const override;
  /// Keeps the state the count lives in.
  void bind(std::span<float> parameters, std::span<float> gradients,
            std::span<float> state) override;

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
  std::uint64_t seed_;
  std::span<float> draws_;  ///< the count of mask elements drawn (state_count)
  workspace<float> mask_;
};

} // namespace strom::compute
