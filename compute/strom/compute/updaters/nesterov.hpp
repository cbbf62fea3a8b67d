#pragma once
// Nesterov momentum in PyTorch's formulation (SGD with nesterov=True, dampening=0): the step
// looks ahead along the updated velocity, without a second gradient evaluation.

#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// v = mu * v + g; update = lr * (g + mu * v)   (state: v[n])
class nesterov_updater final : public updater {
public:
  explicit nesterov_updater(momentum_options options = {}) : options_(options) {}

  /// The options this updater was built with.
  const momentum_options& options() const noexcept { return options_; }
  /// One velocity per parameter.
  std::size_t state_size(std::size_t parameters) const override;
  /// Advances the velocity and turns the gradient into lr * (g + mu * velocity).
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;
  /// The velocity: the first `parameters` floats of the state.
  std::span<float> momentum(std::span<float> state, std::size_t parameters) const override;

private:
  momentum_options options_;
};

} // namespace strom::compute
