#include "strom/compute/cuda/updaters/momentum.hpp"

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

// The _rn intrinsics keep nvcc from contracting a multiply and an add into one FMA: the
// host loop rounds after each operation, and so must the device for the same bits.
// `parameters` is null for compute_update.
template <bool LookAhead>
__global__ void momentum_kernel(float* __restrict__ gradient, float* __restrict__ velocity,
                                float* __restrict__ parameters, std::size_t n, float mu,
                                float lr) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float grad = gradient[i];
  const float advanced = __fadd_rn(__fmul_rn(mu, velocity[i]), grad);
  velocity[i] = advanced;
  const float update = LookAhead ? __fmul_rn(lr, __fadd_rn(grad, __fmul_rn(mu, advanced)))
                                 : __fmul_rn(lr, advanced);
  gradient[i] = update;
  if (parameters != nullptr)
    parameters[i] = __fsub_rn(parameters[i], update);
}

} // namespace

void momentum_device_updater::step_on(float* gradient, float* state, float* parameters,
                                      std::size_t n, const step_context& step,
                                      cuda_context& ctx) const {
  if (n == 0)
    return;
  if (look_ahead_)
    momentum_kernel<true><<<blocks_for(n), block_threads, 0, ctx.stream()>>>(
      gradient, state, parameters, n, options_.momentum, step.learning_rate);
  else
    momentum_kernel<false><<<blocks_for(n), block_threads, 0, ctx.stream()>>>(
      gradient, state, parameters, n, options_.momentum, step.learning_rate);
  check_launch(look_ahead_ ? "nesterov device updater" : "momentum device updater");
}

} // namespace strom::compute::cuda
