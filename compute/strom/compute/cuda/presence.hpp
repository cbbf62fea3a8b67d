#pragma once
// Whether CUDA can run here, asked inside the backend module (device/find_cuda asks it).

#include "strom/compute/device/device_kind.hpp"

namespace strom::compute::cuda {

/// Asks the CUDA runtime for a device: usable, naming it ("cuda:0 (NVIDIA H200)"), or why not.
cuda_presence presence();

} // namespace strom::compute::cuda
