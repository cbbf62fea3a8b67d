#pragma once
// Max and average pooling over each channel with a square window, stride and padding.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/window.hpp"
#include "strom/compute/layers/workspace.hpp"

namespace strom::compute {

/// How a pooling window reduces its inputs.
enum class pooling_kind {
  max,      ///< the largest real input; padded positions never win
  average,  ///< sum / (kernel * kernel): padded positions count as zeros (PyTorch
            ///< count_include_pad=True)
};

/// Pooling of each channel; the kind is chosen once per call, never per element.
class pooling final : public layer {
public:
  /// Pools `input` with a kernel x kernel window; throws std::invalid_argument unless the
  /// window fits and padding < kernel (so that every window holds a real input).
  pooling(shape input, pooling_kind reduction, std::size_t kernel, std::size_t stride,
          std::size_t padding);

  /// "max_pooling" or "average_pooling".
  std::string kind() const override;
  /// The input's channels, pooled height and width.
  shape output_shape() const override;
  /// The reduction applied to each window.
  pooling_kind reduction() const noexcept { return reduction_; }
  /// The shape of one input sample.
  shape input_shape() const noexcept { return input_; }
  /// The kernel, stride and padding.
  const window& sliding_window() const noexcept { return window_; }

  /// Sizes the max-pooling winner indices for max_batch samples.
  void reserve(std::size_t max_batch) override;
  /// Max pooling's winner indices for max_batch samples; average pooling keeps none.
  std::size_t workspace_bytes(std::size_t max_batch) const override;
  /// out = reduction over each window; a training max pass records each window's winner.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// Max: each output gradient goes to its window's winner. Average: it is spread as
  /// gradient / (kernel * kernel) over the window's real inputs.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  /// Input rows [begin, end) (or columns) under output row (or column) `o`, clipped to the
  /// unpadded input of `extent` positions.
  struct covered_range {
    std::size_t begin;
    std::size_t end;
  };
  covered_range covered(std::size_t o, std::size_t extent) const noexcept;

  void forward_max(const float* input, float* output, std::size_t batch, std::uint32_t* winners);
  void forward_average(const float* input, float* output, std::size_t batch) const;
  void backward_max(const float* output_gradient, float* input_gradient, std::size_t batch,
                    const std::uint32_t* winners) const;
  void backward_average(const float* output_gradient, float* input_gradient,
                        std::size_t batch) const;

  shape input_;
  pooling_kind reduction_;
  window window_;
  shape output_;
  /// Max pooling: per output element, the index of the winning input inside its sample.
  workspace<std::uint32_t> winners_;
};

} // namespace strom::compute
