#include "strom/compute/cuda/presence.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace strom::compute::cuda {

cuda_presence presence() {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    // Without a driver CUDA says "driver version is insufficient": name the likely cause.
    if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice)
      return {false, fmt::format("no usable CUDA device: no NVIDIA GPU or driver on this machine "
                                 "(CUDA says: {})",
                                 cudaGetErrorString(status))};
    return {false, fmt::format("no usable CUDA device: {}", cudaGetErrorString(status))};
  }
  if (count == 0)
    return {false, "no usable CUDA device: the driver sees no GPU"};
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess)
    return {false, "no usable CUDA device: its properties could not be read"};
  return {true, fmt::format("cuda:{} ({})", device, properties.name)};
}

} // namespace strom::compute::cuda
