#include "strom/compute/cuda/device_updater.hpp"

#include <stdexcept>
#include <string>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

// The _rn intrinsics keep nvcc from contracting the multiply and the add into one FMA: the
// host's add_l2 rounds after each, and so must the device for the same bits.
__global__ void add_l2_kernel(const float* __restrict__ parameters,
                              float* __restrict__ gradients, std::size_t begin, std::size_t end,
                              float l2) {
  const std::size_t i = begin + blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= end)
    return;
  gradients[i] = __fadd_rn(gradients[i], __fmul_rn(l2, parameters[i]));
}

__global__ void subtract_kernel(float* __restrict__ parameters, const float* __restrict__ update,
                                std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  parameters[i] = __fsub_rn(parameters[i], update[i]);
}

} // namespace

void add_l2(const float* parameters, float* gradients, std::span<const float_range> ranges,
            float l2, cuda_context& ctx) {
  // The device buffers' sizes are not known here; the host add_l2 checks the ranges against
  // them when the model is built, so only a reversed range is refused.
  for (const float_range& range : ranges)
    if (range.begin > range.end)
      // std::to_string, not fmt: nvcc cannot evaluate fmt's compile-time format check.
      throw std::invalid_argument("cuda add_l2: range [" + std::to_string(range.begin) + ", " +
                                  std::to_string(range.end) + ") is reversed");
  if (l2 == 0.0f)
    return;
  for (const float_range& range : ranges) {
    if (range.begin == range.end)
      continue;
    add_l2_kernel<<<blocks_for(range.end - range.begin), block_threads, 0, ctx.stream()>>>(
      parameters, gradients, range.begin, range.end, l2);
    check_launch("cuda add_l2");
  }
}

void subtract(float* parameters, const float* update, std::size_t n, cuda_context& ctx) {
  if (n == 0)
    return;
  subtract_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(parameters, update, n);
  check_launch("cuda subtract");
}

} // namespace strom::compute::cuda
