#pragma once
// The device pooling layer (pooling.cu): max pooling (padded positions never win) and
// average pooling (padded positions count as zeros), as the host layer pools.

#include <cstddef>
#include <memory>

#include "strom/compute/cuda/device_layer.hpp"

namespace strom::compute::cuda {

/// A pooling layer's configuration, as the host layer's (numbers only: see dense.hpp).
struct pooling_sizes {
  shape input;
  bool max = true;  ///< max pooling; false: average pooling
  std::size_t kernel = 1;
  std::size_t stride = 1;
  std::size_t padding = 0;  ///< smaller than the kernel (the host layer checked)
};

/// The pooling layer of `sizes`.
std::unique_ptr<device_layer> make_device_pooling(const pooling_sizes& sizes);

} // namespace strom::compute::cuda
