// Pooling with a thread per output element forward and a thread per input element backward:
// each input gathers the gradients of the windows over it, in the order the host layer
// scatters them, so no two threads write one element and no atomics are needed.

#include "strom/compute/cuda/layers/pooling.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/device_buffer.hpp"

namespace strom::compute::cuda {

namespace {

/// The sizes every kernel of the layer needs, passed by value.
struct geometry {
  int channels, height, width;  ///< of an input sample
  int kernel, stride, padding;
  int out_height, out_width;
  int batch;

  __host__ __device__ std::size_t outputs() const {
    return std::size_t(batch) * channels * out_height * out_width;
  }
  __host__ __device__ std::size_t inputs() const {
    return std::size_t(batch) * channels * height * width;
  }
};

/// Input rows [begin, end) (or columns) under output row (or column) `o`, clipped to the
/// unpadded input of `extent` positions: the host layer's covered().
struct covered_range {
  int begin, end;
};
__device__ inline covered_range covered(int o, int extent, const geometry& g) {
  const int start = o * g.stride;  // in padded coordinates
  return {start > g.padding ? start - g.padding : 0,
          min(extent, start + g.kernel - g.padding)};
}

/// Output rows [begin, end) (or columns) whose window covers input row (or column) `i`.
__device__ inline covered_range covering(int i, int out_extent, const geometry& g) {
  const int padded = i + g.padding;
  // The first o with o * stride + kernel > padded, and the last with o * stride <= padded.
  return {padded >= g.kernel ? (padded - g.kernel) / g.stride + 1 : 0,
          min(out_extent, padded / g.stride + 1)};
}

/// Max over each window; `winners` (not null in training) gets the index of the winning input
/// inside its sample, the first of equal values in row-major order as on the host.
__global__ void max_pool(const float* in, float* out, std::uint32_t* winners, geometry g) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= g.outputs())
    return;
  const int ox = int(i % g.out_width);
  const int oy = int(i / g.out_width % g.out_height);
  const std::size_t plane_index = i / (std::size_t(g.out_width) * g.out_height);  // b * C + c
  const int c = int(plane_index % g.channels);
  const float* sample = in + plane_index / g.channels * g.channels * g.height * g.width;
  const covered_range rows = covered(oy, g.height, g);
  const covered_range cols = covered(ox, g.width, g);
  const int plane = g.height * g.width;
  int best = c * plane + rows.begin * g.width + cols.begin;
  float best_value = sample[best];
  for (int y = rows.begin; y < rows.end; ++y)
    for (int x = cols.begin; x < cols.end; ++x) {
      const int at = c * plane + y * g.width + x;
      if (sample[at] > best_value) {
        best_value = sample[at];
        best = at;
      }
    }
  out[i] = best_value;
  if (winners != nullptr)
    winners[i] = std::uint32_t(best);
}

/// The sum over each window's real inputs / (kernel * kernel).
__global__ void average_pool(const float* in, float* out, geometry g) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= g.outputs())
    return;
  const int ox = int(i % g.out_width);
  const int oy = int(i / g.out_width % g.out_height);
  const float* plane = in + i / (std::size_t(g.out_width) * g.out_height) * g.height * g.width;
  const covered_range rows = covered(oy, g.height, g);
  const covered_range cols = covered(ox, g.width, g);
  float total = 0.0f;
  for (int y = rows.begin; y < rows.end; ++y)
    for (int x = cols.begin; x < cols.end; ++x)
      total += plane[y * g.width + x];
  out[i] = total * (1.0f / float(g.kernel * g.kernel));
}

/// din = the sum of the output gradients whose window this input won, or (average) of every
/// window over it times 1 / (kernel * kernel); outputs in increasing order, as on the host.
template <bool max>
__global__ void pool_backward(const float* dout, const std::uint32_t* winners, float* din,
                              geometry g) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= g.inputs())
    return;
  const int x = int(i % g.width);
  const int y = int(i / g.width % g.height);
  const std::size_t plane_index = i / (std::size_t(g.width) * g.height);  // b * C + c
  const int c = int(plane_index % g.channels);
  const std::uint32_t in_sample = std::uint32_t((c * g.height + y) * g.width + x);
  const std::size_t first_output = plane_index * g.out_height * g.out_width;
  const float scale = 1.0f / float(g.kernel * g.kernel);
  const covered_range rows = covering(y, g.out_height, g);
  const covered_range cols = covering(x, g.out_width, g);
  float total = 0.0f;
  for (int oy = rows.begin; oy < rows.end; ++oy)
    for (int ox = cols.begin; ox < cols.end; ++ox) {
      const std::size_t o = first_output + std::size_t(oy) * g.out_width + ox;
      if constexpr (max) {
        if (winners[o] == in_sample)
          total += dout[o];
      } else {
        // Rounded before the sum, not fused into it: the host adds the rounded share.
        total += __fmul_rn(dout[o], scale);
      }
    }
  din[i] = total;
}

class device_pooling final : public device_layer {
public:
  explicit device_pooling(const pooling_sizes& s)
    : max_(s.max),
      shape_{int(s.input.channels), int(s.input.height), int(s.input.width), int(s.kernel),
             int(s.stride), int(s.padding),
             int((s.input.height + 2 * s.padding - s.kernel) / s.stride + 1),
             int((s.input.width + 2 * s.padding - s.kernel) / s.stride + 1), 0} {}

  void reserve(std::size_t max_batch) override {
    max_batch_ = max_batch;
    if (max_)
      winners_.resize(for_batch(max_batch).outputs());
  }

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const geometry g = for_batch(batch);
    if (max_) {
      std::uint32_t* winners = mode == pass::training ? winners_.data() : nullptr;
      max_pool<<<blocks_for(g.outputs()), block_threads, 0, ctx.stream()>>>(input, output,
                                                                            winners, g);
      check_launch("max_pool");
    } else {
      average_pool<<<blocks_for(g.outputs()), block_threads, 0, ctx.stream()>>>(input, output,
                                                                                g);
      check_launch("average_pool");
    }
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    if (input_gradient == nullptr)
      return;
    const geometry g = for_batch(batch);
    if (max_) {
      pool_backward<true><<<blocks_for(g.inputs()), block_threads, 0, ctx.stream()>>>(
        output_gradient, winners_.data(), input_gradient, g);
    } else {
      pool_backward<false><<<blocks_for(g.inputs()), block_threads, 0, ctx.stream()>>>(
        output_gradient, nullptr, input_gradient, g);
    }
    check_launch("pool_backward");
  }

private:
  geometry for_batch(std::size_t batch) const {
    if (batch > max_batch_)
      throw std::logic_error("device pooling: batch of " + std::to_string(batch) +
                             " exceeds the " + std::to_string(max_batch_) + " reserved");
    geometry g = shape_;
    g.batch = int(batch);
    return g;
  }

  bool max_;
  /// The layer's sizes, batch 0.
  geometry shape_;
  std::size_t max_batch_ = 0;
  /// Max pooling: per output element of the last training pass, its winner in its sample.
  device_buffer<std::uint32_t> winners_;
};

} // namespace

std::unique_ptr<device_layer> make_device_pooling(const pooling_sizes& sizes) {
  return std::make_unique<device_pooling>(sizes);
}

} // namespace strom::compute::cuda
