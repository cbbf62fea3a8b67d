#include "strom/compute/updaters/ada_grad.hpp"

#include <cmath>

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t ada_grad_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void ada_grad_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size("ada_grad", state_size(gradient.size()), state.size());
  const std::size_t n = gradient.size();
  const float epsilon = options_.epsilon;
  const float lr = step.learning_rate;
  float* g = gradient.data();
  float* history = state.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float grad = g[i];
    const float sum_of_squares = history[i] + grad * grad;
    history[i] = sum_of_squares;
    g[i] = lr * grad / (std::sqrt(sum_of_squares) + epsilon);
  }
}

} // namespace strom::compute
