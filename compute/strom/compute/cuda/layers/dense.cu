// out = in * W^T + b as one cuBLAS product onto the broadcast bias, as the host dense layer
// does it; backward: dW = dout^T * in, db = column sums of dout, din = dout * W.

#include "strom/compute/cuda/layers/dense.hpp"

#include <cstddef>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/layers/row_major_gemm.hpp"

namespace strom::compute::cuda {

namespace {

/// out[b][u] = bias[u] over the batch, for the product to accumulate onto (beta = 1).
__global__ void broadcast_bias(const float* bias, float* out, std::size_t units,
                               std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n)
    out[i] = bias[i % units];
}

/// dbias[u] = sum over b of dout[b][u]; a thread per unit, so that reads of a row coalesce
/// and the sum runs in the host's order.
__global__ void sum_columns(const float* dout, float* dbias, std::size_t batch,
                            std::size_t units) {
  const std::size_t u = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (u >= units)
    return;
  float total = 0.0f;
  for (std::size_t b = 0; b < batch; ++b)
    total += dout[b * units + u];
  dbias[u] = total;
}

class device_dense final : public device_layer {
public:
  device_dense(std::size_t inputs, std::size_t units) : inputs_(inputs), units_(units) {}

  void bind(float* parameters, float* gradients, float* state) override {
    parameters_ = parameters;
    gradients_ = gradients;
  }

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const float* weights = parameters_;
    const float* bias = weights + units_ * inputs_;
    const std::size_t n = batch * units_;
    broadcast_bias<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(bias, output, units_, n);
    check_launch("broadcast_bias");
    gemm(ctx, false, true, batch, units_, inputs_, 1.0f, input, inputs_, weights, inputs_, 1.0f,
         output, units_, "cublasSgemm (dense forward)");
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    float* dweights = gradients_;
    float* dbias = dweights + units_ * inputs_;
    gemm(ctx, true, false, units_, inputs_, batch, 1.0f, output_gradient, units_, input,
         inputs_, 0.0f, dweights, inputs_, "cublasSgemm (dense weight gradient)");
    sum_columns<<<blocks_for(units_), block_threads, 0, ctx.stream()>>>(output_gradient, dbias,
                                                                        batch, units_);
    check_launch("sum_columns");
    if (input_gradient != nullptr)
      gemm(ctx, false, false, batch, inputs_, units_, 1.0f, output_gradient, units_,
           parameters_, inputs_, 0.0f, input_gradient, inputs_,
           "cublasSgemm (dense input gradient)");
  }

private:
  std::size_t inputs_;
  std::size_t units_;
  float* parameters_ = nullptr;
  float* gradients_ = nullptr;
};

} // namespace

std::unique_ptr<device_layer> make_device_dense(std::size_t inputs, std::size_t units) {
  return std::make_unique<device_dense>(inputs, units);
}

} // namespace strom::compute::cuda
