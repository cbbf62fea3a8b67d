#pragma once
// Plain stochastic gradient descent: no state.

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// update = lr * g
class sgd_updater final : public updater {
public:
  /// No state: always 0.
  std::size_t state_size(std::size_t parameters) const override;
  /// Scales the gradient by the step's learning rate.
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;
};

} // namespace strom::compute
