#include "strom/compute/encoders/threshold_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "strom/compute/codecs/bitmap_codec.hpp"

namespace strom::compute {

namespace {

// A message of one value costs more in framing than it carries (DL4J sends none either).
constexpr std::size_t min_message_values = 2;

// The sparse entries are written as int32 over the bitmap's word workspace.
static_assert(sizeof(std::int32_t) == sizeof(std::uint32_t));

std::span<std::int32_t> as_indices(std::vector<std::uint32_t>& words, std::size_t count) {
  return {reinterpret_cast<std::int32_t*>(words.data()), count};
}

} // namespace

threshold_encoder::threshold_encoder(std::size_t elements, threshold_encoder_options options)
  : options_(std::move(options)),
    residual_(elements, 0.0f),
    workspace_(options_.calibration ? 0 : bitmap_words(elements), 0u),
    sparse_capacity_(elements / 16) {
  whole_.count = elements;
  if (options_.calibration)
    calibrated_.emplace(elements, options_.blocks, *options_.calibration);
  if (elements > static_cast<std::size_t>(INT32_MAX))
    throw std::invalid_argument("threshold_encoder: " + std::to_string(elements) +
                                " elements do not fit signed 32-bit indices");
  // At a bound of at least one threshold only elements that reached the threshold can lie
  // beyond it, which lets a sparse step clip just those (see encode).
  if (options_.clip_every > 0 && !(options_.clip_factor >= 1.0f))
    throw std::invalid_argument("threshold_encoder: clip factor must be >= 1, got " +
                                std::to_string(options_.clip_factor));
  if (options_.switch_back_divisor == 0)
    throw std::invalid_argument("threshold_encoder: switch-back divisor must be > 0");
  if (options_.shake_up_every > 0 && !(options_.shake_up_divisor >= 1.0f))
    throw std::invalid_argument("threshold_encoder: shake-up divisor must be >= 1, got " +
                                std::to_string(options_.shake_up_divisor));
}

std::optional<encoded_update> threshold_encoder::encode(std::span<const float> update,
                                                        float scale, std::span<float> also) {
  if (update.size() != residual_.size())
    throw std::invalid_argument("threshold_encoder: update of " + std::to_string(update.size()) +
                                " elements for a buffer of " + std::to_string(residual_.size()));
  return encode_with(
    [update](const threshold_scan_args& scan) {
      return threshold_scan(scan.residual, update, scan.threshold, scan.indices, scan.scale,
                            scan.also);
    },
    scale, also);
}

bool threshold_encoder::shake_up_due() const noexcept {
  return options_.shake_up_every > 0 && iteration_ % options_.shake_up_every == 0;
}

threshold_scan_args threshold_encoder::begin_encode(float scale, std::span<float> also) {
  if (!also.empty() && also.size() != residual_.size())
    throw std::invalid_argument("threshold_encoder: 'also' of " + std::to_string(also.size()) +
                                " elements for a buffer of " + std::to_string(residual_.size()));
  ++iteration_;
  // Calibrated, the scan only adds the update in: the blocks are encoded after it, each
  // against a threshold estimated from the residual it leaves.
  if (calibrated_)
    return {residual_, std::numeric_limits<float>::infinity(), {}, scale, also};
  // A shake-up is a bitmap at a fraction of the threshold: it flushes the small values that
  // would otherwise sit in the residual for a long time; its scan only counts and adds.
  if (shake_up_due())
    return {residual_, options_.policy.threshold() / options_.shake_up_divisor, {}, scale, also};
  return {residual_, options_.policy.threshold(), as_indices(workspace_, sparse_capacity_), scale,
          also};
}

std::optional<encoded_update> threshold_encoder::finish_encode(std::size_t hits,
                                                               const threshold_scan_args& scan) {
  if (calibrated_) {
    auto message = calibrated_->encode(residual_, iteration_);
    last_density_ = static_cast<double>(calibrated_->last_values()) /
                    static_cast<double>(std::max<std::size_t>(residual_.size(), 1));
    if (message)
      last_encoding_ = message->enc;
    return message;
  }
  const float threshold = options_.policy.threshold();
  std::optional<encoded_update> message;
  // The elements that reached the threshold, when the workspace lists them all.
  std::optional<std::span<const std::int32_t>> listed;
  if (shake_up_due()) {
    if (hits >= min_message_values) message = bitmap_message(scan.threshold);
    last_density_ = static_cast<double>(message ? message->values : hits) /
                    static_cast<double>(residual_.size());
  } else {
    const bool stay_bitmap = last_encoding_ == encoding::bitmap &&
                             hits >= sparse_capacity_ / options_.switch_back_divisor;
    if (hits < min_message_values)
      message = std::nullopt;
    else if (hits > sparse_capacity_ || stay_bitmap)
      message = bitmap_message(threshold);
    else
      message = sparse_message(hits, threshold);
    if (hits <= sparse_capacity_ && (!message || message->enc == encoding::threshold))
      listed = as_indices(workspace_, hits);
    last_density_ = static_cast<double>(message ? message->values : hits) /
                    static_cast<double>(residual_.size());
    options_.policy.observe(last_density_);
  }
  if (message) last_encoding_ = message->enc;
  clip_result clip;
  if (options_.clip_every > 0 && iteration_ % options_.clip_every == 0) {
    // Every element that did not reach the threshold is below it, so within the bound: when
    // the reached ones are listed, clipping them is clipping the residual, at no pass over it.
    const float bound = options_.clip_factor * threshold;
    clip = listed ? clip_listed_to_bound(residual_, *listed, bound, scan.also)
                  : clip_to_bound(residual_, bound, scan.also);
    clipped_ += clip.removed;
  }
  count_message(message, clip.magnitude);
  return message;
}

void threshold_encoder::count_message(const std::optional<encoded_update>& message,
                                      double clipped_magnitude) {
  ++whole_.encodes;
  whole_.threshold = options_.policy.threshold();
  whole_.scale = whole_.threshold;
  whole_.clipped_mass += clipped_magnitude;
  if (!message)
    return;
  whole_.last_encoding = message->enc;
  whole_.values_sent += message->values;
  whole_.sent_mass += static_cast<double>(message->values) * message->threshold;
}

void threshold_encoder::measure_residual() noexcept {
  if (calibrated_)
    return;
  double mass = 0.0;
  for (const float v : residual_)
    mass += std::fabs(static_cast<double>(v));
  whole_.residual_mass = mass;
}

std::span<const block_figures> threshold_encoder::figures() const noexcept {
  if (calibrated_)
    return calibrated_->figures();
  return {&whole_, 1};
}

float threshold_encoder::threshold() const noexcept {
  return calibrated_ ? calibrated_->threshold() : options_.policy.threshold();
}

encoded_update threshold_encoder::sparse_message(std::size_t values, float threshold) {
  const auto indices = as_indices(workspace_, values);
  threshold_commit(residual_, indices, threshold);
  return {encoding::threshold, threshold, residual_.size(), values,
          std::as_bytes(std::span<const std::int32_t>(indices))};
}

encoded_update threshold_encoder::bitmap_message(float threshold) {
  const std::size_t values = bitmap_encode(residual_, threshold, workspace_);
  return {encoding::bitmap, threshold, residual_.size(), values,
          std::as_bytes(std::span<const std::uint32_t>(workspace_))};
}

threshold_encoder_progress threshold_encoder::progress() const noexcept {
  return {threshold(), iteration_, last_encoding_, last_density_, clipped_};
}

void threshold_encoder::resume(std::span<const float> residual,
                               const threshold_encoder_progress& progress) {
  if (residual.size() != residual_.size())
    throw std::invalid_argument("threshold_encoder: snapshot residual has " +
                                std::to_string(residual.size()) + " elements, the encoder " +
                                std::to_string(residual_.size()));
  std::copy(residual.begin(), residual.end(), residual_.begin());
  options_.policy.resume_at(progress.threshold);
  iteration_ = static_cast<std::size_t>(progress.iteration);
  last_encoding_ = progress.last_encoding;
  last_density_ = progress.last_density;
  clipped_ = progress.clipped;
}

} // namespace strom::compute
