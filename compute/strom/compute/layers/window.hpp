#pragma once
// The geometry shared by convolution and pooling: a square window slid over each channel
// with a stride, over an input zero-padded on every side.

#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>

#include "strom/compute/shape.hpp"

namespace strom::compute {

/// A square sliding window.
struct window {
  std::size_t kernel = 1;   ///< side of the window
  std::size_t stride = 1;   ///< step between window positions
  std::size_t padding = 0;  ///< zero rows and columns added on each side

  /// Whether the window fits inside `input` once padded.
  bool fits(shape input) const noexcept {
    return input.height + 2 * padding >= kernel && input.width + 2 * padding >= kernel;
  }

  /// Window positions along an axis of `extent` inputs.
  std::size_t output_extent(std::size_t extent) const noexcept {
    return (extent + 2 * padding - kernel) / stride + 1;
  }

  /// The output shape with `channels` channels; throws std::invalid_argument when the window
  /// does not fit `input` (the layer was built from an unchecked specification).
  shape output_shape(shape input, std::size_t channels, const char* kind) const {
    if (kernel == 0 || stride == 0)
      throw std::invalid_argument(
        fmt::format("{}: kernel {} and stride {} must be positive", kind, kernel, stride));
    if (!fits(input))
      throw std::invalid_argument(fmt::format("{}: kernel {} exceeds the padded {}x{} input",
                                              kind, kernel, input.height + 2 * padding,
                                              input.width + 2 * padding));
    return {channels, output_extent(input.height), output_extent(input.width)};
  }
};

} // namespace strom::compute
