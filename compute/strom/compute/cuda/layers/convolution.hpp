#pragma once
// The device convolution (convolution.cu): im2col over the whole batch and one cuBLAS
// product, over the host layout W [filters][channels][kernel][kernel] then b [filters].

#include <cstddef>
#include <memory>

#include "strom/compute/cuda/device_layer.hpp"

namespace strom::compute::cuda {

/// A convolution's configuration, as the host layer's (numbers only: see dense.hpp).
struct convolution_sizes {
  shape input;
  std::size_t filters = 1;
  std::size_t kernel = 1;
  std::size_t stride = 1;
  std::size_t padding = 0;
};

/// The convolution of `sizes`; the window must fit the padded input (the host layer checked).
std::unique_ptr<device_layer> make_device_convolution(const convolution_sizes& sizes);

} // namespace strom::compute::cuda
