#include "strom/compute/updaters/sgd.hpp"

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t sgd_updater::state_size(std::size_t) const {
  return 0;
}

void sgd_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                 const step_context& step) const {
  require_state_size("sgd", state_size(gradient.size()), state.size());
  const std::size_t n = gradient.size();
  const float lr = step.learning_rate;
  float* g = gradient.data();
  for (std::size_t i = 0; i < n; ++i)
    g[i] *= lr;
}

} // namespace strom::compute
