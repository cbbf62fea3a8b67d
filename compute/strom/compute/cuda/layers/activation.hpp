#pragma once
// The device activation layer (activation.cu): relu, leaky_relu, tanh and sigmoid, element
// by element as the host layer computes them.

#include <cstddef>
#include <memory>

#include "strom/compute/cuda/device_layer.hpp"
#include "strom/compute/layers/activation.hpp"

namespace strom::compute::cuda {

/// `function` over samples of `sample_size` floats; `alpha` is leaky_relu's negative slope.
std::unique_ptr<device_layer> make_device_activation(std::size_t sample_size,
                                                     activation_kind function, float alpha);

} // namespace strom::compute::cuda
