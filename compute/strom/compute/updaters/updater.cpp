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

void updater::apply_step(std::span<float> gradient, std::span<float> state,
                         const step_context& step, std::span<float> parameters) const {
  require_gradient_size("parameters", parameters.size(), gradient.size());
  compute_update(gradient, state, step);
  apply_update(parameters, gradient);
}

std::size_t updater::scan_step(std::span<float> gradient, std::span<float> state,
                               const step_context& step, const threshold_scan_args& scan) const {
  require_gradient_size("residual", scan.residual.size(), gradient.size());
  compute_update(gradient, state, step);
  return threshold_scan(scan.residual, gradient, scan.threshold, scan.indices, scan.scale,
                        scan.also);
}

void apply_update(std::span<float> parameters, std::span<const float> update) {
  const std::size_t n = parameters.size();
  float* p = parameters.data();
  const float* u = update.data();
  for (std::size_t i = 0; i < n; ++i)
    p[i] -= u[i];
}

void require_gradient_size(std::string_view buffer, std::size_t size, std::size_t gradients) {
  if (size != gradients)
    throw std::invalid_argument(
      fmt::format("updater: {} of {} elements for {} gradients", buffer, size, gradients));
}

void require_state_size(std::string_view updater_name, std::size_t expected, std::size_t actual) {
  if (actual != expected)
    throw std::invalid_argument(fmt::format("{} updater: state has {} floats, expected {}",
                                            updater_name, actual, expected));
}

} // namespace strom::compute
