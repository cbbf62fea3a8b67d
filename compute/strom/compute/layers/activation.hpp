#pragma once
// Element-wise activation functions as one layer class; the kind is chosen once per call,
// never per element.

#include <cstddef>
#include <span>
#include <string>

#include "strom/compute/layer.hpp"

namespace strom::compute {

/// Which element-wise function an activation layer applies.
enum class activation_kind { relu, leaky_relu, tanh, sigmoid };

/// The lower-case name of an activation kind ("relu", "leaky_relu", "tanh", "sigmoid").
std::string to_string(activation_kind kind);

/// An element-wise activation; output shape = input shape.
class activation final : public layer {
public:
  /// `alpha` is the negative slope of leaky_relu and ignored by the other kinds.
  activation(shape input, activation_kind function, float alpha = 0.01f);

  /// The function's name, e.g. "relu".
  std::string kind() const override;
  /// The input shape.
  shape output_shape() const override;
  /// The function applied to each element.
  activation_kind function() const noexcept { return function_; }
  /// The negative slope of leaky_relu (unused by the other kinds).
  float alpha() const noexcept { return alpha_; }

  /// out = f(in).
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// din = dout * f'(in), with f' taken from the saved output where it determines it.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  shape shape_;
  activation_kind function_;
  float alpha_;
};

} // namespace strom::compute
