#include "strom/compute/updaters/updater.hpp"

#include <algorithm>

namespace strom::compute {

void updater::initialize_state(std::span<float> state) const {
  std::fill(state.begin(), state.end(), 0.0f);
}

void apply_update(std::span<float> parameters, std::span<const float> update) {
  const std::size_t n = parameters.size();
  float* p = parameters.data();
  const float* u = update.data();
  for (std::size_t i = 0; i < n; ++i)
    p[i] -= u[i];
}

} // namespace strom::compute
