#include "strom/compute/cuda/updaters/ada_grad.hpp"

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

// The _rn intrinsics keep nvcc from contracting a multiply and an add into one FMA and pin
// the square root and the division to IEEE rounding: the host loop rounds after each
// operation, in this order. `parameters` is null for compute_update.
__global__ void ada_grad_kernel(float* __restrict__ gradient, float* __restrict__ history,
                                float* __restrict__ parameters, std::size_t n, float lr,
                                float epsilon) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float grad = gradient[i];
  const float sum_of_squares = __fadd_rn(history[i], __fmul_rn(grad, grad));
  history[i] = sum_of_squares;
  const float update =
    __fdiv_rn(__fmul_rn(lr, grad), __fadd_rn(__fsqrt_rn(sum_of_squares), epsilon));
  gradient[i] = update;
  if (parameters != nullptr)
    parameters[i] = __fsub_rn(parameters[i], update);
}

} // namespace

void ada_grad_device_updater::step_on(float* gradient, float* state, float* parameters,
                                      std::size_t n, const step_context& step,
                                      cuda_context& ctx) const {
  if (n == 0)
    return;
  ada_grad_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(
    gradient, state, parameters, n, step.learning_rate, options_.epsilon);
  check_launch("ada_grad device updater");
}

} // namespace strom::compute::cuda
