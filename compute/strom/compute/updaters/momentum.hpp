#pragma once
// Classical (heavy-ball) momentum, as PyTorch's SGD(momentum, dampening=0).

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// Options shared by the momentum and Nesterov updaters.
struct momentum_options {
  /// Velocity decay mu; 0.9 is the Deeplearning4j Nesterovs default.
  float momentum = 0.9f;
};

/// v = mu * v + g; update = lr * v   (state: v[n])
class momentum_updater : public updater {
public:
  explicit momentum_updater(momentum_options options = {}) : momentum_updater(options, false) {}

  /// The options this updater was built with.
  const momentum_options& options() const noexcept { return options_; }
  /// One velocity per parameter.
  std::size_t state_size(std::size_t parameters) const override;
  /// Advances the velocity and turns the gradient into lr * velocity (Nesterov: lr * (g + mu *
  /// velocity)).
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;
  /// The velocity: the first `parameters` floats of the state.
  std::span<float> momentum(std::span<float> state, std::size_t parameters) const override;

protected:
  /// With `look_ahead`, the step looks ahead along the updated velocity (Nesterov).
  momentum_updater(momentum_options options, bool look_ahead)
    : options_(options), look_ahead_(look_ahead) {}

private:
  momentum_options options_;
  bool look_ahead_;
};

} // namespace strom::compute
