#include "strom/compute/updaters/adam.hpp"

#include <cmath>

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t adam_updater::state_size(std::size_t parameters) const {
  return 2 * parameters;
}

void adam_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                  const step_context& step) const {
  const std::size_t n = gradient.size();
  require_state_size("adam", state_size(n), state.size());
  const float beta1 = options_.beta1;
  const float beta2 = options_.beta2;
  const float epsilon = options_.epsilon;
  // The bias corrections are per step, not per element; computed in double so that
  // 1 - beta^t stays accurate for small t and beta close to 1.
  const double t = static_cast<double>(step.iteration) + 1.0;
  const auto first_correction =
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta1), t)));
  const auto second_correction =
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta2), t)));
  const float step_size = step.learning_rate * first_correction;
  float* g = gradient.data();
  float* m = state.data();
  float* v = state.data() + n;
  for (std::size_t i = 0; i < n; ++i) {
    const float grad = g[i];
    const float first = beta1 * m[i] + (1.0f - beta1) * grad;
    const float second = beta2 * v[i] + (1.0f - beta2) * grad * grad;
    m[i] = first;
    v[i] = second;
    g[i] = step_size * first / (std::sqrt(second * second_correction) + epsilon);
  }
}

std::span<float> adam_updater::momentum(std::span<float> state, std::size_t parameters) const {
  return state.first(parameters);
}

} // namespace strom::compute
