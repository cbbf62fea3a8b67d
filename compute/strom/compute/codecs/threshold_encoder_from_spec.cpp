#include "strom/compute/codecs/threshold_encoder_from_spec.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace strom::compute {

namespace {

constexpr std::string_view sharing_path = "distributed.sharing";

/// Thresholds: a sent value is +-threshold, so it must be a finite positive step.
result<void> require_threshold(std::string_view field, float value) {
  if (!std::isfinite(value) || !(value > 0.0f))
    return error{fmt::format("{}.{}: {} must be finite and > 0", sharing_path, field, value)};
  return success();
}

/// Sparsities are fractions of the elements sent.
result<void> require_fraction(std::string_view field, double value) {
  if (!(value >= 0.0 && value <= 1.0))
    return error{fmt::format("{}.{}: {} is outside [0, 1]", sharing_path, field, value)};
  return success();
}

/// 0 would zero the threshold at once, 1 would never move it.
result<void> require_decay(std::string_view field, double value) {
  if (!(value > 0.0 && value < 1.0))
    return error{fmt::format("{}.{}: {} is outside (0, 1)", sharing_path, field, value)};
  return success();
}

result<threshold_policy> read_adaptive(schema::AdaptiveThreshold::Reader spec) {
  const adaptive_threshold_options options{.initial_threshold = spec.getInitial(),
                                           .min_sparsity = spec.getMinSparsity(),
                                           .max_sparsity = spec.getMaxSparsity(),
                                           .decay_rate = spec.getDecay()};
  if (auto ok = require_threshold("adaptive.initial", options.initial_threshold); !ok)
    return ok.err();
  if (auto ok = require_fraction("adaptive.minSparsity", options.min_sparsity); !ok)
    return ok.err();
  if (auto ok = require_fraction("adaptive.maxSparsity", options.max_sparsity); !ok)
    return ok.err();
  if (options.max_sparsity < options.min_sparsity)
    return error{fmt::format("{}.adaptive.maxSparsity: {} is below minSparsity {}", sharing_path,
                             options.max_sparsity, options.min_sparsity)};
  if (auto ok = require_decay("adaptive.decay", options.decay_rate); !ok)
    return ok.err();
  return threshold_policy{options};
}

result<threshold_policy> read_fixed(schema::FixedThreshold::Reader spec) {
  const fixed_threshold_options options{.threshold = spec.getThreshold()};
  if (auto ok = require_threshold("fixed.threshold", options.threshold); !ok)
    return ok.err();
  return threshold_policy{options};
}

result<threshold_policy> read_target_sparsity(schema::TargetSparsityThreshold::Reader spec) {
  const target_sparsity_options options{.initial_threshold = spec.getInitial(),
                                        .sparsity_target = spec.getSparsity(),
                                        .decay_rate = spec.getDecay()};
  if (auto ok = require_threshold("targetSparsity.initial", options.initial_threshold); !ok)
    return ok.err();
  if (auto ok = require_fraction("targetSparsity.sparsity", options.sparsity_target); !ok)
    return ok.err();
  if (auto ok = require_decay("targetSparsity.decay", options.decay_rate); !ok)
    return ok.err();
  return threshold_policy{options};
}

result<threshold_policy> read_policy(schema::Sharing::Threshold::Reader spec) {
  switch (spec.which()) {
  case schema::Sharing::Threshold::ADAPTIVE:
    return read_adaptive(spec.getAdaptive());
  case schema::Sharing::Threshold::FIXED:
    return read_fixed(spec.getFixed());
  case schema::Sharing::Threshold::TARGET_SPARSITY:
    return read_target_sparsity(spec.getTargetSparsity());
  }
  return error{fmt::format("{}.threshold: unknown policy {}", sharing_path,
                           static_cast<unsigned>(spec.which()))};
}

} // namespace

result<threshold_encoder_options> make_threshold_encoder_options(schema::Sharing::Reader spec) {
  auto policy = read_policy(spec.getThreshold());
  if (!policy)
    return policy.err();
  threshold_encoder_options options{.policy = std::move(*policy)};
  options.clip_factor = spec.getResidualClipFactor();
  options.clip_every = spec.getResidualClipEvery();
  options.shake_up_every = spec.getShakeUpEvery();
  // Below one threshold, clipping would discard what the next encoding is about to send
  // (DL4J ResidualClippingPostProcessor requires a multiple >= 1 too). Not finite is refused
  // even with clipping off: a NaN there is a mistake, and turning clipping on would use it.
  if (!std::isfinite(options.clip_factor)
      || (options.clip_every > 0 && !(options.clip_factor >= 1.0f)))
    return error{fmt::format("{}.residualClipFactor: {} must be finite and >= 1", sharing_path,
                             options.clip_factor)};
  return options;
}

} // namespace strom::compute
