#include "strom/compute/updaters/adam.hpp"

#include <cmath>

#include "strom/compute/updaters/adam_scan_avx512.hpp"
#include "strom/compute/updaters/state_size_check.hpp"

namespace strom::compute {

namespace {

adam_step_constants constants_of(const adam_options& options, const step_context& step) {
  // The bias corrections are per step, not per element; computed in double so that
  // 1 - beta^t stays accurate for small t and beta close to 1.
  const double t = static_cast<double>(step.iteration) + 1.0;
  const auto first_correction =
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(options.beta1), t)));
  const auto second_correction =
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(options.beta2), t)));
  return {options.beta1, options.beta2, options.epsilon, step.learning_rate * first_correction,
          second_correction};
}

/// Advances one element's moments by its gradient and returns its update (adam_scan_avx512
/// computes the same, sixteen at a time, in the same order of operations).
inline float update_of(float grad, float& m, float& v, const adam_step_constants& c) {
  const float first = c.beta1 * m + (1.0f - c.beta1) * grad;
  const float second = c.beta2 * v + (1.0f - c.beta2) * grad * grad;
  m = first;
  v = second;
  return c.step_size * first / (std::sqrt(second * c.second_correction) + c.epsilon);
}

} // namespace

std::size_t adam_updater::state_size(std::size_t parameters) const {
  return 2 * parameters;
}

void adam_updater::compute_update(std::span<float> gradient, std::span<float> state,
                                  const step_context& step) const {
  const std::size_t n = gradient.size();
  require_state_size("adam", state_size(n), state.size());
  const auto c = constants_of(options_, step);
  float* g = gradient.data();
  float* m = state.data();
  float* v = state.data() + n;
  for (std::size_t i = 0; i < n; ++i)
    g[i] = update_of(g[i], m[i], v[i], c);
}

void adam_updater::apply_step(std::span<float> gradient, std::span<float> state,
                              const step_context& step, std::span<float> parameters) const {
  const std::size_t n = gradient.size();
  require_state_size("adam", state_size(n), state.size());
  require_gradient_size("parameters", parameters.size(), n);
  const auto c = constants_of(options_, step);
  const float* g = gradient.data();
  float* m = state.data();
  float* v = state.data() + n;
  float* p = parameters.data();
  for (std::size_t i = 0; i < n; ++i)
    p[i] -= update_of(g[i], m[i], v[i], c);
}

std::size_t adam_updater::scan_step(std::span<float> gradient, std::span<float> state,
                                    const step_context& step,
                                    const threshold_scan_args& scan) const {
  const std::size_t n = gradient.size();
  require_state_size("adam", state_size(n), state.size());
  require_gradient_size("residual", scan.residual.size(), n);
  require_gradient_size("also", scan.also.empty() ? n : scan.also.size(), n);
  if (const auto hits = adam_scan_avx512(gradient, state.first(n), state.subspan(n),
                                         constants_of(options_, step), scan))
    return *hits;
  return updater::scan_step(gradient, state, step, scan);
}

std::span<float> adam_updater::momentum(std::span<float> state, std::size_t parameters) const {
  return state.first(parameters);
}

} // namespace strom::compute
