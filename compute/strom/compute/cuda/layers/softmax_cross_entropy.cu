// The output loss on the device (declared in device_layer.hpp): a warp per sample, all in one
// block, so that the batch's mean is a fixed-order block sum written by one thread (no
// atomics, no workspace, the same loss on every run). The host accumulates in double; so
// does this.

#include <cstddef>
#include <cstdint>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/device_layer.hpp"
#include "strom/compute/cuda/layers/block_sum.cuh"

namespace strom::compute::cuda {

namespace {

/// Threads of the loss's one block: a warp per sample, 32 samples at a time.
inline constexpr unsigned loss_threads = 1024;

// The bounds keep the registers within what a block of loss_threads may use.
__global__ void __launch_bounds__(loss_threads)
  softmax_cross_entropy_kernel(const float* logits, const std::int32_t* labels,
                               std::size_t batch, std::size_t classes, float* logits_gradient,
                               float* loss) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warps = blockDim.x / 32;
  const float inv_batch = 1.0f / float(batch);
  double total = 0.0;
  for (std::size_t b = threadIdx.x / 32; b < batch; b += warps) {
    const float* z = logits + b * classes;
    // Subtracting the maximum keeps every exp() at most 1: no overflow for large logits.
    float top = -INFINITY;
    for (std::size_t k = lane; k < classes; k += 32)
      top = fmaxf(top, z[k]);
    top = warp_max(top);
    float denominator = 0.0f;
    for (std::size_t k = lane; k < classes; k += 32)
      denominator += expf(z[k] - top);
    denominator = warp_sum(denominator);
    // A label outside [0, classes) has no class: its one-hot row is zero, and so is its
    // cross-entropy -sum(onehot * log softmax).
    const std::int32_t label = labels[b];
    const bool labelled = label >= 0 && std::size_t(label) < classes;
    if (lane == 0 && labelled)
      total += double(logf(denominator) - (z[label] - top));
    if (logits_gradient == nullptr)
      continue;
    float* dz = logits_gradient + b * classes;
    const float scale = inv_batch / denominator;
    for (std::size_t k = lane; k < classes; k += 32) {
      const float probability = expf(z[k] - top) * scale;
      dz[k] = labelled && k == std::size_t(label) ? probability - inv_batch : probability;
    }
  }
  total = block_sum(total);
  if (threadIdx.x == 0)
    *loss = batch == 0 ? 0.0f : float(total / double(batch));
}

} // namespace

void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t batch,
                           std::size_t classes, float* logits_gradient, float* loss,
                           cuda_context& ctx) {
  softmax_cross_entropy_kernel<<<1, loss_threads, 0, ctx.stream()>>>(
    logits, labels, batch, classes, logits_gradient, loss);
  check_launch("softmax_cross_entropy_kernel");
}

} // namespace strom::compute::cuda
