#include "strom/compute/cuda/updaters/sgd.hpp"

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

// The _rn intrinsics keep nvcc from contracting a multiply and an add into one FMA: the
// host loop rounds after each operation, and so must the device for the same bits.
// `parameters` is null for compute_update.
__global__ void sgd_kernel(float* __restrict__ gradient, float* __restrict__ parameters,
                           std::size_t n, float lr) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float update = __fmul_rn(gradient[i], lr);
  gradient[i] = update;
  if (parameters != nullptr)
    parameters[i] = __fsub_rn(parameters[i], update);
}

} // namespace

void sgd_device_updater::step_on(float* gradient, float*, float* parameters, std::size_t n,
                                 const step_context& step, cuda_context& ctx) const {
  if (n == 0)
    return;
  sgd_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(gradient, parameters, n,
                                                                 step.learning_rate);
  check_launch("sgd device updater");
}

} // namespace strom::compute::cuda
