#include "strom/compute/updaters/momentum.hpp"

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t momentum_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void momentum_step(std::span<float> gradient, std::span<float> velocity, float mu, float lr,
                   bool look_ahead) noexcept {
  const std::size_t n = gradient.size();
  float* g = gradient.data();
  float* v = velocity.data();
  // look_ahead is loop-invariant: the compiler emits one vectorised loop per value.
  for (std::size_t i = 0; i < n; ++i) {
    const float advanced = mu * v[i] + g[i];
    v[i] = advanced;
    g[i] = look_ahead ? lr * (g[i] + mu * advanced) : lr * advanced;
  }
}

void momentum_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size("momentum", state_size(gradient.size()), state.size());
  momentum_step(gradient, state, options_.momentum, step.learning_rate, false);
}

std::span<float> momentum_updater::momentum(std::span<float> state, std::size_t parameters) const {
  return state.first(parameters);
}

} // namespace strom::compute
