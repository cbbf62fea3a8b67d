#pragma once
// AdaGrad (Duchi, Hazan & Singer, 2011) in its diagonal form, epsilon outside the square root
// as in Deeplearning4j's AdaGrad.

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// AdaGrad's hyper-parameters; the default is Deeplearning4j's.
struct ada_grad_options {
  float epsilon = 1e-6f;  ///< added to sqrt(h) to keep the division finite
};

/// h = h + g²; update = lr * g / (sqrt(h) + eps)   (state: h[n])
class ada_grad_updater final : public updater {
public:
  explicit ada_grad_updater(ada_grad_options options = {}) : options_(options) {}

  /// The options this updater was built with.
  const ada_grad_options& options() const noexcept { return options_; }
  /// One accumulated squared gradient per parameter.
  std::size_t state_size(std::size_t parameters) const override;
  /// Accumulates g² and divides the scaled gradient by its root.
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;

private:
  ada_grad_options options_;
};

} // namespace strom::compute
