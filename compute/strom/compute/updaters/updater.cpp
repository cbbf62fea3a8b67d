#include "strom/compute/updaters/updater.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

std::span<float> updater::momentum(std::span<float>, std::size_t) const { return {}; }

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

void require_state_size(std::string_view updater_name, std::size_t expected, std::size_t actual) {
  if (actual != expected)
    throw std::invalid_argument(fmt::format("{} updater: state has {} floats, expected {}",
                                            updater_name, actual, expected));
}

} // namespace strom::compute
