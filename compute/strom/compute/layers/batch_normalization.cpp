#include "strom/compute/layers/batch_normalization.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "strom/compute/cpu/sum.hpp"

namespace strom::compute {

batch_normalization::batch_normalization(shape input, float momentum, float epsilon)
  : shape_(input),
    momentum_(momentum),
    epsilon_(epsilon) {
  if (!(momentum >= 0.0f && momentum <= 1.0f))
    throw std::invalid_argument(
      fmt::format("batch_normalization: momentum {} is outside [0, 1]", momentum));
  if (!(epsilon > 0.0f))
    throw std::invalid_argument(
      fmt::format("batch_normalization: epsilon {} must be positive", epsilon));
}

void batch_normalization::reserve(std::size_t max_batch) {
  // Here rather than in the constructor: building the layers of a job only to check it and
  // estimate its memory allocates nothing in proportion to the layer.
  batch_mean_.reserve(shape_.channels, max_batch);
  batch_inv_std_.reserve(shape_.channels, max_batch);
}

std::size_t batch_normalization::workspace_bytes(std::size_t max_batch) const {
  return 2 * shape_.channels * max_batch * sizeof(float);
}

std::string batch_normalization::kind() const {
  return "batch_normalization";
}

shape batch_normalization::output_shape() const {
  return shape_;
}

std::size_t batch_normalization::parameter_count() const {
  return 2 * shape_.channels;
}

std::size_t batch_normalization::state_count() const {
  return 2 * shape_.channels;
}

void batch_normalization::initialize(std::span<float> parameters, std::span<float> state,
                                     rng& gen) const {
  const std::size_t c = shape_.channels;
  std::fill(parameters.begin(), parameters.begin() + static_cast<std::ptrdiff_t>(c), 1.0f);
  std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(c), parameters.end(), 0.0f);
  std::fill(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(c), 0.0f);
  std::fill(state.begin() + static_cast<std::ptrdiff_t>(c), state.end(), 1.0f);
}

void batch_normalization::bind(std::span<float> parameters, std::span<float> gradients,
                               std::span<float> state) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count() &&
         state.size() == state_count());
  parameters_ = parameters;
  gradients_ = gradients;
  state_ = state;
}

float* batch_normalization::statistics_of(workspace<float>& kept, batch_rows rows) {
  // One slot a row, used by the batch's first: the micro-batches of a minibatch in flight
  // at once start at different rows, so each keeps its own statistics.
  return kept.for_rows(rows.first, 1).data();
}

void batch_normalization::transform(const float* input, float* output, std::size_t batch,
                                    std::size_t c, float scale, float shift) const {
  const std::size_t plane = shape_.height * shape_.width;
  for (std::size_t b = 0; b < batch; ++b) {
    const std::size_t first = b * shape_.size() + c * plane;
    const float* in = input + first;
    float* out = output + first;
    for (std::size_t i = 0; i < plane; ++i)
      out[i] = in[i] * scale + shift;
  }
}

void batch_normalization::forward(std::span<const float> input, std::span<float> output,
                                  batch_rows rows, pass mode) {
  const std::size_t batch = rows.count;
  assert(input.size() >= batch * shape_.size() && output.size() >= batch * shape_.size());
  const std::size_t channels = shape_.channels;
  const std::size_t plane = shape_.height * shape_.width;
  const float* gamma = parameters_.data();
  const float* beta = gamma + channels;
  float* running_mean = state_.data();
  float* running_var = running_mean + channels;
  const float count = static_cast<float>(batch * plane);
  float* batch_mean = nullptr;
  float* batch_inv_std = nullptr;
  if (mode == pass::training) {
    batch_mean = statistics_of(batch_mean_, rows);
    batch_inv_std = statistics_of(batch_inv_std_, rows);
  }
  for (std::size_t c = 0; c < channels; ++c) {
    float mean = running_mean[c];
    float variance = running_var[c];
    if (mode == pass::training) {
      float total = 0.0f;
      for (std::size_t b = 0; b < batch; ++b)
        total += sum(input.data() + b * shape_.size() + c * plane, plane);
      mean = total / count;
      float deviations = 0.0f;
      for (std::size_t b = 0; b < batch; ++b)
        deviations += squared_deviations(input.data() + b * shape_.size() + c * plane, mean, plane);
      variance = deviations / count;
      // The running variance is the unbiased estimate, as PyTorch keeps it.
      const float unbiased = count > 1.0f ? deviations / (count - 1.0f) : variance;
      running_mean[c] = momentum_ * running_mean[c] + (1.0f - momentum_) * mean;
      running_var[c] = momentum_ * running_var[c] + (1.0f - momentum_) * unbiased;
    }
    const float inv_std = 1.0f / std::sqrt(variance + epsilon_);
    if (mode == pass::training) {
      batch_mean[c] = mean;
      batch_inv_std[c] = inv_std;
    }
    const float scale = gamma[c] * inv_std;
    transform(input.data(), output.data(), batch, c, scale, beta[c] - mean * scale);
  }
}

void batch_normalization::backward(std::span<const float> input, std::span<const float> output,
                                   std::span<const float> output_gradient,
                                   std::span<float> input_gradient, batch_rows rows) {
  const std::size_t batch = rows.count;
  assert(output_gradient.size() >= batch * shape_.size());
  const std::size_t channels = shape_.channels;
  const std::size_t plane = shape_.height * shape_.width;
  const float* gamma = parameters_.data();
  float* dgamma = gradients_.data();
  float* dbeta = dgamma + channels;
  const float count = static_cast<float>(batch * plane);
  const float* batch_mean = statistics_of(batch_mean_, rows);
  const float* batch_inv_std = statistics_of(batch_inv_std_, rows);
  for (std::size_t c = 0; c < channels; ++c) {
    const float mean = batch_mean[c];
    const float inv_std = batch_inv_std[c];
    float dout_sum = 0.0f;
    float dout_centered = 0.0f;
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t first = b * shape_.size() + c * plane;
      dout_sum += sum(output_gradient.data() + first, plane);
      dout_centered +=
        centered_dot(output_gradient.data() + first, input.data() + first, mean, plane);
    }
    dbeta[c] = dout_sum;
    dgamma[c] = dout_centered * inv_std;
    if (input_gradient.empty())
      continue;
    // din = gamma * inv_std * (dout - dbeta / N - xhat * dgamma / N), with
    // xhat = (x - mean) * inv_std, folded into din = k_dout * dout + k_in * x + offset.
    const float k_dout = gamma[c] * inv_std;
    const float k_in = -k_dout * inv_std * dgamma[c] / count;
    const float offset = -k_dout * dout_sum / count - k_in * mean;
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t first = b * shape_.size() + c * plane;
      const float* dout = output_gradient.data() + first;
      const float* in = input.data() + first;
      float* din = input_gradient.data() + first;
      for (std::size_t i = 0; i < plane; ++i)
        din[i] = k_dout * dout[i] + k_in * in[i] + offset;
    }
  }
}

} // namespace strom::compute
