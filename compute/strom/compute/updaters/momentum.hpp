#pragma once
// Classical (heavy-ball) momentum, as PyTorch's SGD(momentum, dampening=0).

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// Options shared by the momentum and Nesterov updaters.
struct momentum_options {
  /// Velocity decay mu; 0.9 is the Deeplearning4j Nesterovs default.
  float momentum = 0.9f;
};

/// The velocity step both momentum updaters take: v = mu * v + g, then gradient becomes
/// lr * v, or with `look_ahead` (Nesterov) lr * (g + mu * v). Sizes are checked by callers.
void momentum_step(std::span<float> gradient, std::span<float> velocity, float mu, float lr,
                   bool look_ahead) noexcept;

/// v = mu * v + g; update = lr * v   (state: v[n])
class momentum_updater final : public updater {
public:
  explicit momentum_updater(momentum_options options = {}) : options_(options) {}

  /// The options this updater was built with.
  const momentum_options& options() const noexcept { return options_; }
  /// One velocity per parameter.
  std::size_t state_size(std::size_t parameters) const override;
  /// Advances the velocity and turns the gradient into lr * velocity.
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;
  /// The velocity: the first `parameters` floats of the state.
  std::span<float> momentum(std::span<float> state, std::size_t parameters) const override;

private:
  momentum_options options_;
};

} // namespace strom::compute
