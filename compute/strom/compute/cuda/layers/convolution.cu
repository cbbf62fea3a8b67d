// Convolution over the whole batch at once: im2col unfolds every sample into one matrix
// col [patch][batch * positions], so that a single product W [filters][patch] * col gives
// every output (one large gemm instead of a small one per sample), and the result is then
// reordered to the host layout [batch][filters][positions] with the bias. Backward reorders
// dL/d(output) the same way, so dW and d(col) are single products as well, and col2im is a
// gather per input element (no atomics, and the host's summation order).
//
// Even a 1x1, stride 1, unpadded kernel is unfolded: its col is the batch reordered from
// [batch][channels][positions] to [channels][batch * positions], which the product needs.

#include "strom/compute/cuda/layers/convolution.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/layers/block_sum.cuh"
#include "strom/compute/cuda/layers/row_major_gemm.hpp"

namespace strom::compute::cuda {

namespace {

/// The sizes every kernel of the layer needs, passed by value.
struct geometry {
  int channels, height, width;  ///< of an input sample
  int kernel, stride, padding;
  int filters, out_height, out_width;
  int batch;

  __host__ __device__ int positions() const { return out_height * out_width; }
  __host__ __device__ int patch() const { return channels * kernel * kernel; }
  /// Columns of col and of the reordered output: batch * positions.
  __host__ __device__ std::size_t columns() const {
    return std::size_t(batch) * std::size_t(positions());
  }
};

/// col[(c * k + ky) * k + kx][b * positions + oy * out_w + ox] = the input at
/// (b, c, oy * stride + ky - padding, ox * stride + kx - padding), zero in the padding.
__global__ void im2col(const float* in, float* col, geometry g) {
  const std::size_t n = std::size_t(g.patch()) * g.columns();
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const std::size_t column = i % g.columns();
  const int row = int(i / g.columns());
  const int b = int(column / g.positions());
  const int position = int(column % g.positions());
  const int ox = position % g.out_width;
  const int oy = position / g.out_width;
  const int kx = row % g.kernel;
  const int ky = row / g.kernel % g.kernel;
  const int c = row / (g.kernel * g.kernel);
  const int y = oy * g.stride + ky - g.padding;
  const int x = ox * g.stride + kx - g.padding;
  const bool inside = y >= 0 && y < g.height && x >= 0 && x < g.width;
  col[i] = inside ? in[((std::size_t(b) * g.channels + c) * g.height + y) * g.width + x] : 0.0f;
}

/// The input gradient from d(col): for each input element, the sum of the d(col) entries
/// im2col copied it to, over ky then kx as the host's col2im adds them.
__global__ void col2im(const float* col, float* din, geometry g) {
  const std::size_t n = std::size_t(g.batch) * g.channels * g.height * g.width;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const int x = int(i % g.width);
  const int y = int(i / g.width % g.height);
  const int c = int(i / (std::size_t(g.width) * g.height) % g.channels);
  const int b = int(i / (std::size_t(g.width) * g.height * g.channels));
  float total = 0.0f;
  for (int ky = 0; ky < g.kernel; ++ky) {
    const int oy_stride = y + g.padding - ky;  // oy * stride, if an output row uses (y, ky)
    if (oy_stride < 0 || oy_stride % g.stride != 0 || oy_stride / g.stride >= g.out_height)
      continue;
    for (int kx = 0; kx < g.kernel; ++kx) {
      const int ox_stride = x + g.padding - kx;
      if (ox_stride < 0 || ox_stride % g.stride != 0 || ox_stride / g.stride >= g.out_width)
        continue;
      const std::size_t row = (std::size_t(c) * g.kernel + ky) * g.kernel + kx;
      const std::size_t position =
        std::size_t(oy_stride / g.stride) * g.out_width + ox_stride / g.stride;
      total += col[row * g.columns() + std::size_t(b) * g.positions() + position];
    }
  }
  din[i] = total;
}

/// out[b][f][p] = by_filter[f][b * positions + p] + bias[f]: the product's layout to the host's.
__global__ void to_samples(const float* by_filter, const float* bias, float* out, geometry g) {
  const std::size_t n = std::size_t(g.filters) * g.columns();
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const int p = int(i % g.positions());
  const int f = int(i / g.positions() % g.filters);
  const int b = int(i / (std::size_t(g.positions()) * g.filters));
  out[i] = by_filter[f * g.columns() + std::size_t(b) * g.positions() + p] + bias[f];
}

/// by_filter[f][b * positions + p] = dout[b][f][p]: the host's layout to the product's.
__global__ void to_filters(const float* dout, float* by_filter, geometry g) {
  const std::size_t n = std::size_t(g.filters) * g.columns();
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n)
    return;
  const int p = int(i % g.positions());
  const int f = int(i / g.positions() % g.filters);
  const int b = int(i / (std::size_t(g.positions()) * g.filters));
  by_filter[f * g.columns() + std::size_t(b) * g.positions() + p] = dout[i];
}

/// dbias[f] = the sum of row f of by_filter; a block per filter.
__global__ void sum_rows(const float* by_filter, float* dbias, std::size_t columns) {
  const float* row = by_filter + blockIdx.x * columns;
  float total = 0.0f;
  for (std::size_t j = threadIdx.x; j < columns; j += blockDim.x)
    total += row[j];
  total = block_sum(total);
  if (threadIdx.x == 0)
    dbias[blockIdx.x] = total;
}

class device_convolution final : public device_layer {
public:
  explicit device_convolution(const convolution_sizes& s)
    : shape_{int(s.input.channels), int(s.input.height), int(s.input.width), int(s.kernel),
             int(s.stride), int(s.padding), int(s.filters),
             int((s.input.height + 2 * s.padding - s.kernel) / s.stride + 1),
             int((s.input.width + 2 * s.padding - s.kernel) / s.stride + 1), 0} {}

  void bind(float* parameters, float* gradients, float* state) override {
    parameters_ = parameters;
    gradients_ = gradients;
  }

  void reserve(std::size_t max_batch) override {
    max_batch_ = max_batch;
    const std::size_t columns = max_batch * std::size_t(shape_.positions());
    col_.resize(std::size_t(shape_.patch()) * columns);
    by_filter_.resize(std::size_t(shape_.filters) * columns);
  }

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const geometry g = for_batch(batch);
    const float* weights = parameters_;
    const float* bias = weights + std::size_t(g.filters) * g.patch();
    unfold(input, g, ctx);
    gemm(ctx, false, false, g.filters, g.columns(), g.patch(), 1.0f, weights, g.patch(),
         col_.data(), g.columns(), 0.0f, by_filter_.data(), g.columns(),
         "cublasSgemm (convolution forward)");
    const std::size_t n = std::size_t(g.filters) * g.columns();
    to_samples<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(by_filter_.data(), bias,
                                                                  output, g);
    check_launch("to_samples");
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    const geometry g = for_batch(batch);
    const float* weights = parameters_;
    float* dweights = gradients_;
    float* dbias = dweights + std::size_t(g.filters) * g.patch();
    const std::size_t n = std::size_t(g.filters) * g.columns();
    to_filters<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(output_gradient,
                                                                  by_filter_.data(), g);
    check_launch("to_filters");
    sum_rows<<<g.filters, reduce_threads, 0, ctx.stream()>>>(by_filter_.data(), dbias,
                                                             g.columns());
    check_launch("sum_rows");
    // col_ is unfolded again: an inference pass since the training one may have reused it.
    unfold(input, g, ctx);
    gemm(ctx, false, true, g.filters, g.patch(), g.columns(), 1.0f, by_filter_.data(),
         g.columns(), col_.data(), g.columns(), 0.0f, dweights, g.patch(),
         "cublasSgemm (convolution weight gradient)");
    if (input_gradient == nullptr)
      return;
    // The input's columns are no longer needed: their buffer takes dL/d(col).
    gemm(ctx, true, false, g.patch(), g.columns(), g.filters, 1.0f, weights, g.patch(),
         by_filter_.data(), g.columns(), 0.0f, col_.data(), g.columns(),
         "cublasSgemm (convolution input gradient)");
    const std::size_t inputs = std::size_t(g.batch) * g.channels * g.height * g.width;
    col2im<<<blocks_for(inputs), block_threads, 0, ctx.stream()>>>(col_.data(),
                                                                   input_gradient, g);
    check_launch("col2im");
  }

private:
  geometry for_batch(std::size_t batch) const {
    if (batch > max_batch_)
      throw std::logic_error("device convolution: batch of " + std::to_string(batch) +
                             " exceeds the " + std::to_string(max_batch_) + " reserved");
    geometry g = shape_;
    g.batch = int(batch);
    return g;
  }

  void unfold(const float* input, const geometry& g, cuda_context& ctx) {
    const std::size_t n = std::size_t(g.patch()) * g.columns();
    im2col<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(input, col_.data(), g);
    check_launch("im2col");
  }

  /// The layer's sizes, batch 0.
  geometry shape_;
  std::size_t max_batch_ = 0;
  float* parameters_ = nullptr;
  float* gradients_ = nullptr;
  /// The unfolded batch [patch][batch * positions]; in backward, dL/d(col).
  device_buffer<float> col_;
  /// Outputs or their gradients by filter: [filters][batch * positions].
  device_buffer<float> by_filter_;
};

} // namespace

std::unique_ptr<device_layer> make_device_convolution(const convolution_sizes& sizes) {
  return std::make_unique<device_convolution>(sizes);
}

} // namespace strom::compute::cuda
