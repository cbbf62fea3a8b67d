// Batch normalisation with a block per channel: the block reduces the channel's statistics
// (two passes, mean then squared deviations, as the host), then normalises the channel. A
// channel's elements are batch runs of `plane` contiguous floats, so the threads of a block
// read along a plane.

#include "strom/compute/cuda/layers/batch_normalization.hpp"

#include <cstddef>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/layers/block_sum.cuh"

namespace strom::compute::cuda {

namespace {

/// Where the channel's j-th element (j < batch * plane) lies in a [batch][channels][plane]
/// tensor: sample j / plane, position j % plane.
struct channel_elements {
  std::size_t channels, plane, channel;

  __device__ std::size_t operator()(std::size_t j) const {
    return (j / plane * channels + channel) * plane + j % plane;
  }
};

/// Training: normalises channel blockIdx.x with its batch statistics, keeps them in
/// batch_mean and batch_inv_std for backward and updates the running ones. Inference:
/// normalises with the running statistics.
__global__ void normalize(const float* in, float* out, const float* gamma, const float* beta,
                          float* running_mean, float* running_var, float* batch_mean,
                          float* batch_inv_std, std::size_t batch, std::size_t channels,
                          std::size_t plane, float momentum, float epsilon, bool training) {
  const std::size_t c = blockIdx.x;
  const std::size_t n = batch * plane;
  const channel_elements at{channels, plane, c};
  float mean = 0.0f;
  float variance = 0.0f;
  if (!training) {
    mean = running_mean[c];
    variance = running_var[c];
  } else {
    const float count = float(n);
    float total = 0.0f;
    for (std::size_t j = threadIdx.x; j < n; j += blockDim.x)
      total += in[at(j)];
    mean = block_sum(total) / count;
    float deviations = 0.0f;
    for (std::size_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float deviation = in[at(j)] - mean;
      deviations += deviation * deviation;
    }
    deviations = block_sum(deviations);
    variance = deviations / count;
    // The running variance is the unbiased estimate, as PyTorch (and the host) keep it.
    const float unbiased = count > 1.0f ? deviations / (count - 1.0f) : variance;
    if (threadIdx.x == 0) {
      running_mean[c] = momentum * running_mean[c] + (1.0f - momentum) * mean;
      running_var[c] = momentum * running_var[c] + (1.0f - momentum) * unbiased;
    }
  }
  const float inv_std = 1.0f / sqrtf(variance + epsilon);
  if (training && threadIdx.x == 0) {
    batch_mean[c] = mean;
    batch_inv_std[c] = inv_std;
  }
  const float scale = gamma[c] * inv_std;
  const float shift = beta[c] - mean * scale;
  for (std::size_t j = threadIdx.x; j < n; j += blockDim.x)
    out[at(j)] = in[at(j)] * scale + shift;
}

/// dbeta, dgamma and (unless din is null) din of channel blockIdx.x, through the statistics
/// of the last training pass.
__global__ void normalize_backward(const float* in, const float* dout, float* din,
                                   const float* gamma, float* dgamma, float* dbeta,
                                   const float* batch_mean, const float* batch_inv_std,
                                   std::size_t batch, std::size_t channels, std::size_t plane) {
  const std::size_t c = blockIdx.x;
  const std::size_t n = batch * plane;
  const channel_elements at{channels, plane, c};
  const float mean = batch_mean[c];
  const float inv_std = batch_inv_std[c];
  float dout_sum = 0.0f;
  float dout_centered = 0.0f;
  for (std::size_t j = threadIdx.x; j < n; j += blockDim.x) {
    const std::size_t k = at(j);
    dout_sum += dout[k];
    dout_centered += dout[k] * (in[k] - mean);
  }
  dout_sum = block_sum(dout_sum);
  dout_centered = block_sum(dout_centered);
  const float gamma_gradient = dout_centered * inv_std;
  if (threadIdx.x == 0) {
    dbeta[c] = dout_sum;
    dgamma[c] = gamma_gradient;
  }
  if (din == nullptr)
    return;
  // din = gamma * inv_std * (dout - dbeta / N - xhat * dgamma / N), with
  // xhat = (x - mean) * inv_std, folded into din = k_dout * dout + k_in * x + offset.
  const float count = float(n);
  const float k_dout = gamma[c] * inv_std;
  const float k_in = -k_dout * inv_std * gamma_gradient / count;
  const float offset = -k_dout * dout_sum / count - k_in * mean;
  for (std::size_t j = threadIdx.x; j < n; j += blockDim.x) {
    const std::size_t k = at(j);
    din[k] = k_dout * dout[k] + k_in * in[k] + offset;
  }
}

class device_batch_normalization final : public device_layer {
public:
  device_batch_normalization(shape input, float momentum, float epsilon)
    : channels_(input.channels),
      plane_(input.height * input.width),
      momentum_(momentum),
      epsilon_(epsilon) {}

  void bind(float* parameters, float* gradients, float* state) override {
    parameters_ = parameters;
    gradients_ = gradients;
    state_ = state;
  }

  void reserve(std::size_t max_batch) override {
    // Here rather than in the constructor, as on the host.
    batch_mean_.resize(channels_);
    batch_inv_std_.resize(channels_);
  }

  void forward(const float* input, float* output, std::size_t batch, pass mode,
               cuda_context& ctx) override {
    const float* gamma = parameters_;
    const float* beta = gamma + channels_;
    float* running_mean = state_;
    float* running_var = running_mean + channels_;
    normalize<<<unsigned(channels_), reduce_threads, 0, ctx.stream()>>>(
      input, output, gamma, beta, running_mean, running_var, batch_mean_.data(),
      batch_inv_std_.data(), batch, channels_, plane_, momentum_, epsilon_,
      mode == pass::training);
    check_launch("normalize");
  }

  void backward(const float* input, const float* output, const float* output_gradient,
                float* input_gradient, std::size_t batch, cuda_context& ctx) override {
    float* dgamma = gradients_;
    float* dbeta = dgamma + channels_;
    normalize_backward<<<unsigned(channels_), reduce_threads, 0, ctx.stream()>>>(
      input, output_gradient, input_gradient, parameters_, dgamma, dbeta, batch_mean_.data(),
      batch_inv_std_.data(), batch, channels_, plane_);
    check_launch("normalize_backward");
  }

private:
  std::size_t channels_;
  std::size_t plane_;
  float momentum_;
  float epsilon_;
  float* parameters_ = nullptr;
  float* gradients_ = nullptr;
  float* state_ = nullptr;
  /// Per channel, the mean and 1 / sqrt(variance + epsilon) of the last training batch.
  device_buffer<float> batch_mean_;
  device_buffer<float> batch_inv_std_;
};

} // namespace

std::unique_ptr<device_layer> make_device_batch_normalization(shape input, float momentum,
                                                              float epsilon) {
  return std::make_unique<device_batch_normalization>(input, momentum, epsilon);
}

} // namespace strom::compute::cuda
