#include "strom/compute/cuda/updaters/adam.hpp"

#include <cmath>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

/// Adam's values of one step, computed on the host exactly as adam.cpp's constants_of does
/// (in double, then rounded to float), so that both backends scale by the same floats.
struct adam_step {
  float beta1;
  float beta2;
  float one_minus_beta1;    ///< 1 - beta1, rounded to float as the host loop rounds it
  float one_minus_beta2;    ///< 1 - beta2, likewise
  float epsilon;
  float step_size;          ///< learning rate / (1 - beta1^t)
  float second_correction;  ///< 1 / (1 - beta2^t)
};

adam_step step_of(const adam_options& options, const step_context& step) {
  const double t = static_cast<double>(step.iteration) + 1.0;
  const auto first_correction =
    static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(options.beta1), t)));
  const auto second_correction =
    static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(options.beta2), t)));
  return {.beta1 = options.beta1,
          .beta2 = options.beta2,
          .one_minus_beta1 = 1.0f - options.beta1,
          .one_minus_beta2 = 1.0f - options.beta2,
          .epsilon = options.epsilon,
          .step_size = step.learning_rate * first_correction,
          .second_correction = second_correction};
}

// The _rn intrinsics keep nvcc from contracting multiplies and adds into FMAs and pin the
// square root and the division to IEEE rounding: the host's update_of rounds after each
// operation, in this order, and so must the device for the same bits. `parameters` is null
// for compute_update; with it, the gradient is not written.
__global__ void adam_kernel(float* __restrict__ gradient, float* __restrict__ first_moment,
                            float* __restrict__ second_moment, float* __restrict__ parameters,
                            std::size_t n, adam_step c) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float grad = gradient[i];
  const float first =
    __fadd_rn(__fmul_rn(c.beta1, first_moment[i]), __fmul_rn(c.one_minus_beta1, grad));
  const float second = __fadd_rn(__fmul_rn(c.beta2, second_moment[i]),
                                 __fmul_rn(__fmul_rn(c.one_minus_beta2, grad), grad));
  first_moment[i] = first;
  second_moment[i] = second;
  const float update =
    __fdiv_rn(__fmul_rn(c.step_size, first),
              __fadd_rn(__fsqrt_rn(__fmul_rn(second, c.second_correction)), c.epsilon));
  if (parameters != nullptr)
    parameters[i] = __fsub_rn(parameters[i], update);
  else
    gradient[i] = update;
}

} // namespace

void adam_device_updater::step_on(float* gradient, float* state, float* parameters,
                                  std::size_t n, const step_context& step,
                                  cuda_context& ctx) const {
  if (n == 0)
    return;
  adam_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(
    gradient, state, state + n, parameters, n, step_of(options_, step));
  check_launch("adam device updater");
}

} // namespace strom::compute::cuda
