#include "strom/compute/layers/dense_columns.hpp"

#include <algorithm>
#include <cassert>

#include "strom/compute/cpu/blas.hpp"

namespace strom::compute {

dense_columns::dense_columns(std::size_t inputs, std::size_t units, std::size_t begin,
                             std::size_t end, weight_init init)
  : inputs_(inputs), units_(units), begin_(begin), end_(end), init_(init) {
  assert(begin < end && end <= units);
}

std::string dense_columns::kind() const {
  return "dense_columns";
}

shape dense_columns::output_shape() const {
  return {last() ? units_ : inputs_ + end_, 1, 1};
}

std::size_t dense_columns::parameter_count() const {
  return (end_ - begin_) * (inputs_ + 1);
}

float_range dense_columns::regularized_range() const {
  return {0, (end_ - begin_) * inputs_};
}

void dense_columns::initialize(std::span<float> parameters, std::span<float> state,
                               rng& gen) const {
  const std::size_t weights = (end_ - begin_) * inputs_;
  fill_weights(parameters.first(weights), init_, inputs_, units_, gen);
  std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(weights), parameters.end(), 0.0f);
}

void dense_columns::bind(std::span<float> parameters, std::span<float> gradients,
                         std::span<float> state) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  parameters_ = parameters;
  gradients_ = gradients;
}

void dense_columns::forward(std::span<const float> input, std::span<float> output,
                            batch_rows rows, pass mode) {
  const std::size_t batch = rows.count;
  const std::size_t in_width = input_width();
  const std::size_t out_width = output_shape().size();
  const std::size_t columns = end_ - begin_;
  // Where the block's own columns start in a sample's output.
  const std::size_t own = last() ? begin_ : inputs_ + begin_;
  const float* bias = parameters_.data() + columns * inputs_;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* in = input.data() + b * in_width;
    float* out = output.data() + b * out_width;
    if (last())  // the earlier columns only
      std::copy(in + inputs_, in + in_width, out);
    else  // the input and the earlier columns
      std::copy(in, in + in_width, out);
    std::copy(bias, bias + columns, out + own);
  }
  // The product accumulates onto the biases (beta = 1), reading each sample's input part.
  gemm(false, true, batch, columns, inputs_, 1.0f, input.data(), in_width, parameters_.data(),
       inputs_, 1.0f, output.data() + own, out_width);
}

void dense_columns::backward(std::span<const float> input, std::span<const float> output,
                             std::span<const float> output_gradient,
                             std::span<float> input_gradient, batch_rows rows) {
  const std::size_t batch = rows.count;
  const std::size_t in_width = input_width();
  const std::size_t out_width = output_shape().size();
  const std::size_t columns = end_ - begin_;
  const std::size_t own = last() ? begin_ : inputs_ + begin_;
  const float* dcols = output_gradient.data() + own;
  float* dweights = gradients_.data();
  float* dbias = dweights + columns * inputs_;
  gemm(true, false, columns, inputs_, batch, 1.0f, dcols, out_width, input.data(), in_width,
       0.0f, dweights, inputs_);
  std::fill(dbias, dbias + columns, 0.0f);
  for (std::size_t b = 0; b < batch; ++b) {
    const float* row = dcols + b * out_width;
    for (std::size_t c = 0; c < columns; ++c)
      dbias[c] += row[c];
  }
  if (input_gradient.empty())
    return;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* dout = output_gradient.data() + b * out_width;
    float* din = input_gradient.data() + b * in_width;
    if (last()) {  // the input's gradient starts here; the earlier columns' is passed back
      std::fill(din, din + inputs_, 0.0f);
      std::copy(dout, dout + begin_, din + inputs_);
    } else {  // what later blocks said of the input and the earlier columns
      std::copy(dout, dout + in_width, din);
    }
  }
  gemm(false, false, batch, inputs_, columns, 1.0f, dcols, out_width, parameters_.data(),
       inputs_, 1.0f, input_gradient.data(), in_width);
}

} // namespace strom::compute
