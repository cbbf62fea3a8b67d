#include "strom/compute/updaters/rms_prop.hpp"

#include <cmath>

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::size_t rms_prop_updater::state_size(std::size_t parameters) const {
  return parameters;
}

void rms_prop_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                      const step_context& step) const {
  require_state_size("rms_prop", state_size(gradient.size()), state.size());
  const std::size_t n = gradient.size();
  const float decay = options_.decay;
  const float epsilon = options_.epsilon;
  const float lr = step.learning_rate;
  float* g = gradient.data();
  float* cache = state.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float grad = g[i];
    const float mean_square = decay * cache[i] + (1.0f - decay) * grad * grad;
    cache[i] = mean_square;
    g[i] = lr * grad / (std::sqrt(mean_square) + epsilon);
  }
}

} // namespace strom::compute
