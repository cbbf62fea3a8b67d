#pragma once
// The device dropout layer (dropout.cu): inverted dropout with masks from a counter-based
// hash, since the host generator's sequence cannot be drawn in parallel.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "strom/compute/cuda/device_layer.hpp"

namespace strom::compute::cuda {

/// Dropout with probability `rate` in [0, 1) over samples of `sample_size` floats; its masks
/// repeat from `seed` alone (but differ from the host layer's).
std::unique_ptr<device_layer> make_device_dropout(std::size_t sample_size, float rate,
                                                  std::uint64_t seed);

} // namespace strom::compute::cuda
