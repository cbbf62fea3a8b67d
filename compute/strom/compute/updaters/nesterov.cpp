#include "strom/compute/updaters/nesterov.hpp"

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t nesterov_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void nesterov_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size("nesterov", state_size(gradient.size()), state.size());
  const std::size_t n = gradient.size();
  const float mu = options_.momentum;
  const float lr = step.learning_rate;
  float* g = gradient.data();
  float* v = state.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float velocity = mu * v[i] + g[i];
    v[i] = velocity;
    g[i] = lr * (g[i] + mu * velocity);
  }
}

} // namespace strom::compute
