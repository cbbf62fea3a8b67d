#include "strom/compute/cuda/updaters/rms_prop.hpp"

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

// The _rn intrinsics keep nvcc from contracting multiplies and adds into FMAs and pin the
// square root and the division to IEEE rounding: the host loop rounds after each operation,
// in this order ((1 - decay) * g) * g included. `parameters` is null for compute_update.
__global__ void rms_prop_kernel(float* __restrict__ gradient, float* __restrict__ cache,
                                float* __restrict__ parameters, std::size_t n, float decay,
                                float one_minus_decay, float lr, float epsilon) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float grad = gradient[i];
  const float mean_square = __fadd_rn(__fmul_rn(decay, cache[i]),
                                      __fmul_rn(__fmul_rn(one_minus_decay, grad), grad));
  cache[i] = mean_square;
  const float update =
    __fdiv_rn(__fmul_rn(lr, grad), __fadd_rn(__fsqrt_rn(mean_square), epsilon));
  gradient[i] = update;
  if (parameters != nullptr)
    parameters[i] = __fsub_rn(parameters[i], update);
}

} // namespace

void rms_prop_device_updater::step_on(float* gradient, float* state, float* parameters,
                                      std::size_t n, const step_context& step,
                                      cuda_context& ctx) const {
  if (n == 0)
    return;
  rms_prop_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(
    gradient, state, parameters, n, options_.decay, 1.0f - options_.decay, step.learning_rate,
    options_.epsilon);
  check_launch("rms_prop device updater");
}

} // namespace strom::compute::cuda
