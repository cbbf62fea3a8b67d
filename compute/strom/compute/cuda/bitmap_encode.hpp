#pragma once
// The Deeplearning4j bitmap encoding (codecs/bitmap_codec.hpp) on the GPU: 2 bits an element
// written straight into device words that are then copied to the host as the frame payload.

#include <cstddef>
#include <cstdint>

#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"

namespace strom::compute::cuda {

/// The host bitmap_encode on the device: encodes residual[n] into device `words`
/// (bitmap_words(n) of them), takes each encoded step out of the residual and returns the
/// number of non-zero codes. `count` is device scratch for that number.
std::size_t bitmap_encode(float* residual, std::size_t n, float threshold, std::uint32_t* words,
                          device_buffer<std::uint32_t>& count, cuda_context& ctx);

} // namespace strom::compute::cuda
