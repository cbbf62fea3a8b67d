#pragma once
// The device dense layer (dense.cu): cuBLAS products over the host layout, W [units][inputs]
// then b [units]. Its sizes come as numbers, not as the host layer: the .cu files stay clear
// of the host headers that include fmt, which nvcc cannot compile in C++20 (fmt 9).

#include <cstddef>
#include <memory>

#include "strom/compute/cuda/device_layer.hpp"

namespace strom::compute::cuda {

/// A dense layer from `inputs` floats per sample to `units`.
std::unique_ptr<device_layer> make_device_dense(std::size_t inputs, std::size_t units);

} // namespace strom::compute::cuda
