#include "strom/compute/encoders/threshold_policy.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace strom::compute {

namespace {

void require_threshold(float threshold) {
  if (!std::isfinite(threshold) || threshold <= 0.0f)
    throw std::invalid_argument("threshold_policy: threshold must be finite and > 0, got " +
                                std::to_string(threshold));
}

void require_decay(double decay_rate) {
  if (!(decay_rate > 0.0 && decay_rate < 1.0))
    throw std::invalid_argument("threshold_policy: decay rate must be in (0, 1), got " +
                                std::to_string(decay_rate));
}

// Keeps a long run of shrinking (a model whose updates stopped) or growing from leaving the
// range decode_add accepts: finite and > 0.
float bounded(double threshold) {
  return static_cast<float>(std::clamp(threshold,
                                       static_cast<double>(std::numeric_limits<float>::min()),
                                       static_cast<double>(std::numeric_limits<float>::max())));
}

} // namespace

threshold_policy::threshold_policy(fixed_threshold_options options)
  : options_(options), threshold_(options.threshold) {
  require_threshold(options.threshold);
}

threshold_policy::threshold_policy(adaptive_threshold_options options)
  : options_(options), threshold_(options.initial_threshold) {
  require_threshold(options.initial_threshold);
  require_decay(options.decay_rate);
  if (!(options.min_sparsity >= 0.0 && options.min_sparsity <= options.max_sparsity))
    throw std::invalid_argument("threshold_policy: adaptive sparsity band [" +
                                std::to_string(options.min_sparsity) + ", " +
                                std::to_string(options.max_sparsity) + "] is empty");
}

threshold_policy::threshold_policy(target_sparsity_options options)
  : options_(options), threshold_(options.initial_threshold) {
  require_threshold(options.initial_threshold);
  require_decay(options.decay_rate);
}

void threshold_policy::observe(double sparsity) noexcept {
  if (const auto* adaptive = std::get_if<adaptive_threshold_options>(&options_)) {
    // Too few values sent: lower the threshold; too many: raise it; inside the band: keep.
    if (sparsity < adaptive->min_sparsity)
      threshold_ = bounded(threshold_ * adaptive->decay_rate);
    else if (sparsity > adaptive->max_sparsity)
      threshold_ = bounded(threshold_ / adaptive->decay_rate);
  } else if (const auto* target = std::get_if<target_sparsity_options>(&options_)) {
    // Always steers: a single target has no band to rest in.
    if (sparsity < target->sparsity_target)
      threshold_ = bounded(threshold_ * target->decay_rate);
    else if (sparsity > target->sparsity_target)
      threshold_ = bounded(threshold_ / target->decay_rate);
  }
}

} // namespace strom::compute
