#pragma once
// A fully connected layer: out = in * W^T + b over the flattened input.

#include <cstddef>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/weight_init.hpp"

namespace strom::compute {

/// Fully connected layer; parameters are W [units][inputs] then b [units] (PyTorch layout).
class dense final : public layer {
public:
  /// A layer mapping samples of shape `input` (flattened) to `units` outputs.
  dense(shape input, std::size_t units, weight_init init);

  // -- description -----------------------------------------------------------------------

  /// "dense".
  std::string kind() const override;
  /// {units, 1, 1}.
  shape output_shape() const override;
  /// units * inputs + units.
  std::size_t parameter_count() const override;
  /// The weights W, not the biases.
  float_range regularized_range() const override;
  /// Input floats per sample, output columns, and how the weights are drawn.
  std::size_t inputs() const noexcept { return inputs_; }
  std::size_t units() const noexcept { return units_; }
  weight_init init() const noexcept { return init_; }

  // -- set-up ----------------------------------------------------------------------------

  /// Draws W from the weight init; biases start at zero.
  void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const override;
  /// Keeps the parameter and gradient slices.
  void bind(std::span<float> parameters, std::span<float> gradients,
            std::span<float> state) override;

  // -- the step --------------------------------------------------------------------------

  /// out = in * W^T + b, one gemm.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// dW = dout^T * in, db = column sums of dout, din = dout * W.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  std::size_t inputs_;
  std::size_t units_;
  weight_init init_;
  std::span<float> parameters_;
  std::span<float> gradients_;
};

} // namespace strom::compute
