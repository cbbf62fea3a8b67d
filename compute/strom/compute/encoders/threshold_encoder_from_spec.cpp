#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"

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
  case schema::Sharing::Threshold::CALIBRATED:
    break;  // make_threshold_encoder_options takes it before any policy is read
  }
  return error{fmt::format("{}.threshold: unknown policy {}", sharing_path,
                           static_cast<unsigned>(spec.which()))};
}

/// Below one threshold, clipping would discard what the next encoding is about to send (DL4J
/// ResidualClippingPostProcessor requires a multiple >= 1 too). Not finite is refused even
/// with clipping off: a NaN there is a mistake, and turning clipping on would use it.
result<void> check_clipping(schema::Sharing::Reader spec) {
  const float factor = spec.getResidualClipFactor();
  if (!std::isfinite(factor) || (spec.getResidualClipEvery() > 0 && !(factor >= 1.0f)))
    return error{fmt::format("{}.residualClipFactor: {} must be finite and >= 1", sharing_path,
                             factor)};
  return success();
}

/// A job that names no policy (the union's first member, its struct never set) is calibrated.
bool calibrated(schema::Sharing::Threshold::Reader spec) {
  return spec.isCalibrated() || (spec.isAdaptive() && !spec.hasAdaptive());
}

result<calibrated_threshold_options> read_calibrated(schema::Sharing::Threshold::Reader spec) {
  if (!spec.isCalibrated())
    return calibrated_threshold_options{};
  const auto calibrated = spec.getCalibrated();
  const calibrated_threshold_options options{
    .density = calibrated.getDensity(),
    .dense_elements = static_cast<std::size_t>(calibrated.getDenseElements())};
  if (!(options.density > 0.0 && options.density <= 1.0 / 16.0))
    return error{fmt::format("{}.calibrated.density: {} is outside (0, 0.0625]: beyond a "
                             "sixteenth of the elements a bitmap is smaller", sharing_path,
                             options.density)};
  return options;
}

} // namespace

result<threshold_encoder_options> make_threshold_encoder_options(schema::Sharing::Reader spec) {
  // Checked whatever the policy: a setting that does not apply is still a mistake when wrong.
  if (auto ok = check_clipping(spec); !ok)
    return ok.err();
  if (calibrated(spec.getThreshold())) {
    auto calibration = read_calibrated(spec.getThreshold());
    if (!calibration)
      return calibration.err();
    threshold_encoder_options options;
    options.calibration = *calibration;
    return options;
  }
  auto policy = read_policy(spec.getThreshold());
  if (!policy)
    return policy.err();
  threshold_encoder_options options{.policy = std::move(*policy)};
  options.clip_factor = spec.getResidualClipFactor();
  options.clip_every = spec.getResidualClipEvery();
  options.shake_up_every = spec.getShakeUpEvery();
  return options;
}

namespace {

constexpr float sum_power = 0.0f;   // W^-0: the updates add up
constexpr float mean_power = 1.0f;  // W^-1: their mean

} // namespace

float update_power(schema::Sharing::Reader spec, schema::Updater::Reader updater) {
  switch (spec.getCombine()) {
  case schema::UpdateCombination::SUM:
    return sum_power;
  case schema::UpdateCombination::MEAN:
    return mean_power;
  case schema::UpdateCombination::AUTO:
    break;
  }
  if (!calibrated(spec.getThreshold()))
    return sum_power;  // Deeplearning4j's exact behaviour where its policy is named
  switch (updater.which()) {
  case schema::Updater::SGD:
  case schema::Updater::MOMENTUM:
  case schema::Updater::NESTEROV:
    return mean_power;
  default:
    return sum_power;
  }
}

own_update_handling own_update_handling_of(schema::Sharing::Reader spec, float power) {
  // Measured with bench_sharing (4 workers, 5 seeds) on fashion_nesterov: own updates at once
  // and masked momentum -1.24 points against dist_sync, neither +0.02. Where the updates are
  // summed an own update at once is the larger step and it helps: fashion_mlp.job, Adam,
  // without its distributed section, 2 nodes: 89.57/89.61% instead of 89.21/89.19%.
  if (power == mean_power)
    return {.at_once = false, .momentum_masking = false};
  return {.at_once = spec.getApplyOwnUpdate(), .momentum_masking = spec.getMomentumMasking()};
}

} // namespace strom::compute
