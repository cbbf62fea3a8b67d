#include "strom/compute/layers/convolution.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <utility>

#include "strom/compute/cpu/blas.hpp"
#include "strom/compute/cpu/sum.hpp"

namespace strom::compute {

namespace {

/// The output positions [begin, end) along one axis whose input position
/// o * stride + offset - padding lies inside [0, extent).
std::pair<std::size_t, std::size_t> inside_outputs(std::size_t extent, std::size_t outputs,
                                                   std::size_t offset, const window& w) {
  const std::size_t begin =
    offset >= w.padding ? 0 : (w.padding - offset + w.stride - 1) / w.stride;
  const std::size_t end =
    extent + w.padding > offset ? (extent + w.padding - offset + w.stride - 1) / w.stride : 0;
  const std::size_t clamped_end = std::min(end, outputs);
  return {std::min(begin, clamped_end), clamped_end};
}

} // namespace

convolution::convolution(shape input, std::size_t filters, std::size_t kernel,
                         std::size_t stride, std::size_t padding, weight_init init)
  : input_(input),
    window_{kernel, stride, padding},
    output_(window_.output_shape(input, filters, "convolution")),
    init_(init),
    unfolded_is_input_(kernel == 1 && stride == 1 && padding == 0) {
  if (filters == 0 || input.channels == 0)
    throw std::invalid_argument(fmt::format(
      "convolution: filters {} and input channels {} must be positive", filters, input.channels));
}

std::string convolution::kind() const {
  return "convolution";
}

shape convolution::output_shape() const {
  return output_;
}

std::size_t convolution::patch_size() const noexcept {
  return input_.channels * window_.kernel * window_.kernel;
}

std::size_t convolution::parameter_count() const {
  return output_.channels * patch_size() + output_.channels;
}

float_range convolution::regularized_range() const {
  return {0, output_.channels * patch_size()};
}

void convolution::initialize(std::span<float> parameters, std::span<float> state,
                             rng& gen) const {
  const std::size_t weights = output_.channels * patch_size();
  const std::size_t area = window_.kernel * window_.kernel;
  fill_weights(parameters.first(weights), init_, patch_size(), output_.channels * area, gen);
  std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(weights), parameters.end(), 0.0f);
}

void convolution::bind(std::span<float> parameters, std::span<float> gradients,
                       std::span<float> state) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  parameters_ = parameters;
  gradients_ = gradients;
}

void convolution::reserve(std::size_t max_batch) {
  if (!unfolded_is_input_)
    col_.assign(patch_size() * output_.height * output_.width, 0.0f);
}

std::size_t convolution::workspace_bytes(std::size_t) const {
  return unfolded_is_input_ ? 0 : patch_size() * output_.height * output_.width * sizeof(float);
}

void convolution::im2col(const float* sample, float* col) const {
  const std::size_t k = window_.kernel;
  const std::size_t out_h = output_.height;
  const std::size_t out_w = output_.width;
  const std::size_t positions = out_h * out_w;
  const std::size_t stride = window_.stride;
  for (std::size_t c = 0; c < input_.channels; ++c) {
    const float* plane = sample + c * input_.height * input_.width;
    for (std::size_t ky = 0; ky < k; ++ky) {
      const auto [y0, y1] = inside_outputs(input_.height, out_h, ky, window_);
      for (std::size_t kx = 0; kx < k; ++kx) {
        const auto [x0, x1] = inside_outputs(input_.width, out_w, kx, window_);
        float* row = col + ((c * k + ky) * k + kx) * positions;
        std::fill(row, row + y0 * out_w, 0.0f);
        std::fill(row + y1 * out_w, row + positions, 0.0f);
        for (std::size_t oy = y0; oy < y1; ++oy) {
          // Unsigned wrap-around cancels: the index is non-negative for oy >= y0, ox >= x0.
          const float* src = plane + (oy * stride + ky - window_.padding) * input_.width +
                             kx - window_.padding;
          float* dst = row + oy * out_w;
          std::fill(dst, dst + x0, 0.0f);
          std::fill(dst + x1, dst + out_w, 0.0f);
          if (stride == 1)
            std::copy(src + x0, src + x1, dst + x0);
          else
            for (std::size_t ox = x0; ox < x1; ++ox)
              dst[ox] = src[ox * stride];
        }
      }
    }
  }
}

void convolution::col2im(const float* col, float* sample) const {
  const std::size_t k = window_.kernel;
  const std::size_t out_h = output_.height;
  const std::size_t out_w = output_.width;
  const std::size_t positions = out_h * out_w;
  const std::size_t stride = window_.stride;
  std::fill(sample, sample + input_.size(), 0.0f);
  for (std::size_t c = 0; c < input_.channels; ++c) {
    float* plane = sample + c * input_.height * input_.width;
    for (std::size_t ky = 0; ky < k; ++ky) {
      const auto [y0, y1] = inside_outputs(input_.height, out_h, ky, window_);
      for (std::size_t kx = 0; kx < k; ++kx) {
        const auto [x0, x1] = inside_outputs(input_.width, out_w, kx, window_);
        const float* row = col + ((c * k + ky) * k + kx) * positions;
        for (std::size_t oy = y0; oy < y1; ++oy) {
          float* dst = plane + (oy * stride + ky - window_.padding) * input_.width + kx -
                       window_.padding;
          const float* src = row + oy * out_w;
          if (stride == 1)
            for (std::size_t ox = x0; ox < x1; ++ox)
              dst[ox] += src[ox];
          else
            for (std::size_t ox = x0; ox < x1; ++ox)
              dst[ox * stride] += src[ox];
        }
      }
    }
  }
}

const float* convolution::columns_of(const float* sample) {
  if (unfolded_is_input_)
    return sample;
  if (col_.empty())
    throw std::logic_error("convolution: forward or backward before reserve()");
  im2col(sample, col_.data());
  return col_.data();
}

void convolution::forward(std::span<const float> input, std::span<float> output,
                          batch_rows rows, pass mode) {
  const std::size_t batch = rows.count;
  assert(input.size() >= batch * input_.size() && output.size() >= batch * output_.size());
  const std::size_t filters = output_.channels;
  const std::size_t positions = output_.height * output_.width;
  const std::size_t patch = patch_size();
  const float* weights = parameters_.data();
  const float* bias = weights + filters * patch;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* col = columns_of(input.data() + b * input_.size());
    float* out = output.data() + b * output_.size();
    // The bias goes in first so that the product accumulates onto it (beta = 1).
    for (std::size_t f = 0; f < filters; ++f)
      std::fill(out + f * positions, out + (f + 1) * positions, bias[f]);
    gemm(false, false, filters, positions, patch, 1.0f, weights, patch, col, positions, 1.0f, out,
         positions);
  }
}

void convolution::backward(std::span<const float> input, std::span<const float> output,
                           std::span<const float> output_gradient,
                           std::span<float> input_gradient, batch_rows rows) {
  const std::size_t batch = rows.count;
  assert(output_gradient.size() >= batch * output_.size());
  const std::size_t filters = output_.channels;
  const std::size_t positions = output_.height * output_.width;
  const std::size_t patch = patch_size();
  const float* weights = parameters_.data();
  float* dweights = gradients_.data();
  float* dbias = dweights + filters * patch;
  std::fill(gradients_.begin(), gradients_.end(), 0.0f);
  for (std::size_t b = 0; b < batch; ++b) {
    const float* dout = output_gradient.data() + b * output_.size();
    for (std::size_t f = 0; f < filters; ++f)
      dbias[f] += sum(dout + f * positions, positions);
    const float* col = columns_of(input.data() + b * input_.size());
    gemm(false, true, filters, patch, positions, 1.0f, dout, positions, col, positions, 1.0f,
         dweights, patch);
    if (input_gradient.empty())
      continue;
    float* din = input_gradient.data() + b * input_.size();
    if (unfolded_is_input_) {
      gemm(true, false, patch, positions, filters, 1.0f, weights, patch, dout, positions, 0.0f,
           din, positions);
    } else {
      // The sample's columns are no longer needed: their buffer takes dL/d(columns).
      gemm(true, false, patch, positions, filters, 1.0f, weights, patch, dout, positions, 0.0f,
           col_.data(), positions);
      col2im(col_.data(), din);
    }
  }
}

} // namespace strom::compute
