#pragma once
// 2-D convolution with a square kernel, stride and zero padding, computed per sample as
// im2col followed by one gemm (backward: gemm then col2im).

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/weight_init.hpp"
#include "strom/compute/layers/window.hpp"

namespace strom::compute {

/// Convolution; parameters are W [filters][channels][kernel][kernel] then b [filters].
class convolution final : public layer {
public:
  /// `filters` output channels over `input`; throws std::invalid_argument when the kernel
  /// does not fit the padded input.
  convolution(shape input, std::size_t filters, std::size_t kernel, std::size_t stride,
              std::size_t padding, weight_init init);

  // -- description -----------------------------------------------------------------------

  /// "convolution".
  std::string kind() const override;
  /// {filters, (H + 2p - k) / s + 1, (W + 2p - k) / s + 1}.
  shape output_shape() const override;
  /// filters * channels * kernel * kernel + filters.
  std::size_t parameter_count() const override;
  /// The kernels W, not the biases.
  float_range regularized_range() const override;
  /// The shape of one input sample.
  shape input_shape() const noexcept { return input_; }
  /// The kernel, stride and padding.
  const window& sliding_window() const noexcept { return window_; }

  // -- set-up ----------------------------------------------------------------------------

  /// Draws W with fan_in = channels * k * k and fan_out = filters * k * k; biases are zero.
  void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const override;
  /// Keeps the parameter and gradient slices.
  void bind(std::span<float> parameters, std::span<float> gradients,
            std::span<float> state) override;
  /// Sizes the one-sample im2col buffer (independent of max_batch).
  void reserve(std::size_t max_batch) override;
  /// The im2col buffer's bytes (none for a 1x1 kernel with stride 1 and no padding).
  std::size_t workspace_bytes(std::size_t max_batch) const override;

  // -- the step --------------------------------------------------------------------------

  /// Per sample: out = W * im2col(in) + b.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// dW = sum over samples of dout * im2col(in)^T, db = sums of dout, din = col2im(W^T * dout).
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  /// Rows of the im2col matrix: channels * kernel * kernel.
  std::size_t patch_size() const noexcept;
  /// Unfolds one input sample into col_ [patch_size][output positions].
  void im2col(const float* sample, float* col) const;
  /// Folds a [patch_size][output positions] matrix back, summing into one input sample.
  void col2im(const float* col, float* sample) const;
  /// The im2col matrix of a sample: the sample itself for a 1x1, stride 1, unpadded kernel.
  const float* columns_of(const float* sample);

  shape input_;
  window window_;
  shape output_;
  weight_init init_;
  /// A 1x1 kernel with stride 1 and no padding needs no unfolding.
  bool unfolded_is_input_;
  std::span<float> parameters_;
  std::span<float> gradients_;
  std::vector<float> col_;
};

} // namespace strom::compute
