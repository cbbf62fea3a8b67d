#include "strom/compute/updaters/momentum.hpp"

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t momentum_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void momentum_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size(look_ahead_ ? "nesterov" : "momentum", state_size(gradient.size()),
                     state.size());
  const std::size_t n = gradient.size();
  const float mu = options_.momentum;
  const float lr = step.learning_rate;
  const bool look_ahead = look_ahead_;
  float* g = gradient.data();
  float* v = state.data();
  // look_ahead is loop-invariant: the compiler emits one vectorised loop per value.
  for (std::size_t i = 0; i < n; ++i) {
    const float advanced = mu * v[i] + g[i];
    v[i] = advanced;
    g[i] = look_ahead ? lr * (g[i] + mu * advanced) : lr * advanced;
  }
}

std::span<float> momentum_updater::momentum(std::span<float> state, std::size_t parameters) const {
  return state.first(parameters);
}

} // namespace strom::compute
