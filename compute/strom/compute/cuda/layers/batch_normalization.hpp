#pragma once
// The device batch normalisation (batch_normalization.cu), over the host layout: parameters
// gamma [c] then beta [c], state running mean [c] then running variance [c].

#include <memory>

#include "strom/compute/cuda/device_layer.hpp"

namespace strom::compute::cuda {

/// Batch normalisation of samples of shape `input` per channel; running statistics follow
/// running = momentum * running + (1 - momentum) * batch, the variance unbiased.
std::unique_ptr<device_layer> make_device_batch_normalization(shape input, float momentum,
                                                              float epsilon);

} // namespace strom::compute::cuda
