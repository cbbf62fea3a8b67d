// Element-wise activations, one thread per element; the function is a template argument so
// that the kind is chosen once per launch, as the host layer chooses it once per call.

#include "strom/compute/cuda/layers/activation.hpp"

#include <cstddef>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

template <activation_kind function>
__global__ void activate(const float* in, float* out, std::size_t n, float alpha) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const float x = in[i];
  if constexpr (function == activation_kind::relu)
    out[i] = x > 0.0f ? x : 0.0f;
  else if constexpr (function == activation_kind::leaky_relu)
    out[i] = x > 0.0f ? x : alpha * x;
  else if constexpr (function == activation_kind::tanh)
    out[i] = tanhf(x);
  else
    out[i] = 1.0f / (1.0f + expf(-x));
}

/// din = dout * f'; relu, tanh and sigmoid take f' from the saved output, leaky_relu from the
/// input (its slope may be zero or negative, so the output cannot tell the side).
template <activation_kind function>
__global__ void activate_backward(const float* in, const float* out, const float* dout,
                                  float* din, std::size_t n, float alpha) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  if constexpr (function == activation_kind::relu)
    din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
  else if constexpr (function == activation_kind::leaky_relu)
    din[i] = in[i] > 0.0f ? dout[i] : alpha * dout[i];
  else if constexpr (function == activation_kind::tanh)
    din[i] = dout[i] * (1.0f - out[i] * out[i]);
  else
    din[i] = dout[i] * out[i] * (1.0f - out[i]);
}

template <activation_kind function>
void launch_forward(const float* in, float* out, std::size_t n, float alpha,
                    cudaStream_t stream) {
  activate<function><<<blocks_for(n), block_threads, 0, stream>>>(in, out, n, alpha);
  check_launch("activate");
}

template <activation_kind function>
void launch_backward(const float* in, const float* out, const float* dout, float* din,
                     std::size_t n, float alpha, cudaStream_t stream) {
  activate_backward<function>
    <<<blocks_for(n), block_threads, 0, stream>>>(in, out, dout, din, n, alpha);
  check_launch("activate_backward");
}

class device_activation final : public device_layer {
public:
  device_activation(std::size_t sample_size, activation_kind function, float alpha)
    : sample_size_(sample_size), function_(function), alpha_(alpha) {}

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const std::size_t n = batch * sample_size_;
    switch (function_) {
      case activation_kind::relu:
        return launch_forward<activation_kind::relu>(input, output, n, alpha_, ctx.stream());
      case activation_kind::leaky_relu:
        return launch_forward<activation_kind::leaky_relu>(input, output, n, alpha_,
                                                           ctx.stream());
      case activation_kind::tanh:
        return launch_forward<activation_kind::tanh>(input, output, n, alpha_, ctx.stream());
      case activation_kind::sigmoid:
        return launch_forward<activation_kind::sigmoid>(input, output, n, alpha_,
                                                        ctx.stream());
    }
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    if (input_gradient == nullptr)
      return;
    const std::size_t n = batch * sample_size_;
    const float* dout = output_gradient;
    switch (function_) {
      case activation_kind::relu:
        return launch_backward<activation_kind::relu>(input, output, dout, input_gradient, n,
                                                      alpha_, ctx.stream());
      case activation_kind::leaky_relu:
        return launch_backward<activation_kind::leaky_relu>(input, output, dout, input_gradient,
                                                            n, alpha_, ctx.stream());
      case activation_kind::tanh:
        return launch_backward<activation_kind::tanh>(input, output, dout, input_gradient, n,
                                                      alpha_, ctx.stream());
      case activation_kind::sigmoid:
        return launch_backward<activation_kind::sigmoid>(input, output, dout, input_gradient, n,
                                                         alpha_, ctx.stream());
    }
  }

private:
  std::size_t sample_size_;
  activation_kind function_;
  float alpha_;
};

} // namespace

std::unique_ptr<device_layer> make_device_activation(std::size_t sample_size,
                                                     activation_kind function, float alpha) {
  return std::make_unique<device_activation>(sample_size, function, alpha);
}

} // namespace strom::compute::cuda
