#include "strom/compute/updaters/nesterov.hpp"

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t nesterov_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void nesterov_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size("nesterov", state_size(gradient.size()), state.size());
  momentum_step(gradient, state, options_.momentum, step.learning_rate, true);
}

std::span<float> nesterov_updater::momentum(std::span<float> state, std::size_t parameters) const {
  return state.first(parameters);
}

} // namespace strom::compute
