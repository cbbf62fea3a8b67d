#include "strom/compute/layers/dense.hpp"

#include <algorithm>
#include <cassert>

#include "strom/compute/cpu/blas.hpp"

namespace strom::compute {

dense::dense(shape input, std::size_t units, weight_init init)
  : inputs_(input.size()), units_(units), init_(init) {
}

std::string dense::kind() const {
  return "dense";
}

shape dense::output_shape() const {
  return {units_, 1, 1};
}

std::size_t dense::parameter_count() const {
  return units_ * inputs_ + units_;
}

float_range dense::regularized_range() const {
  return {0, units_ * inputs_};
}

void dense::initialize(std::span<float> parameters, std::span<float> state, rng& gen) const {
  const std::size_t weights = units_ * inputs_;
  fill_weights(parameters.first(weights), init_, inputs_, units_, gen);
  std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(weights), parameters.end(), 0.0f);
}

void dense::bind(std::span<float> parameters, std::span<float> gradients, std::span<float> state) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  parameters_ = parameters;
  gradients_ = gradients;
}

void dense::forward(std::span<const float> input, std::span<float> output, batch_rows rows,
                    pass mode) {
  const std::size_t batch = rows.count;
  assert(input.size() >= batch * inputs_ && output.size() >= batch * units_);
  const float* weights = parameters_.data();
  const float* bias = weights + units_ * inputs_;
  float* out = output.data();
  // The bias goes in first so that the product accumulates onto it (beta = 1).
  for (std::size_t b = 0; b < batch; ++b)
    std::copy(bias, bias + units_, out + b * units_);
  gemm(false, true, batch, units_, inputs_, 1.0f, input.data(), inputs_, weights, inputs_, 1.0f,
       out, units_);
}

void dense::backward(std::span<const float> input, std::span<const float> output,
                     std::span<const float> output_gradient, std::span<float> input_gradient,
                     batch_rows rows) {
  const std::size_t batch = rows.count;
  assert(output_gradient.size() >= batch * units_);
  const float* dout = output_gradient.data();
  float* dweights = gradients_.data();
  float* dbias = dweights + units_ * inputs_;
  gemm(true, false, units_, inputs_, batch, 1.0f, dout, units_, input.data(), inputs_, 0.0f,
       dweights, inputs_);
  std::fill(dbias, dbias + units_, 0.0f);
  for (std::size_t b = 0; b < batch; ++b) {
    const float* row = dout + b * units_;
    for (std::size_t u = 0; u < units_; ++u)
      dbias[u] += row[u];
  }
  if (!input_gradient.empty())
    gemm(false, false, batch, inputs_, units_, 1.0f, dout, units_, parameters_.data(), inputs_,
         0.0f, input_gradient.data(), inputs_);
}

} // namespace strom::compute
