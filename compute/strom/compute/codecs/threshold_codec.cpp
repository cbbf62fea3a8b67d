#include "strom/compute/codecs/threshold_codec.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "strom/compute/codecs/float_lanes.hpp"
#include "strom/compute/codecs/little_endian.hpp"
#include "strom/compute/codecs/threshold_scan_avx512.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t lanes = float_lane_count;

// Elements checked per block before branching: only the rare block holding a hit branches.
constexpr std::size_t scan_block = 16;

constexpr std::int32_t float_abs_bits = 0x7fffffff;

/// Refuses an `also` that is neither empty nor as long as the residual.
void require_also_size(const char* kernel, std::size_t also, std::size_t residual) {
  if (also != 0 && also != residual)
    throw std::invalid_argument(std::string{kernel} + ": the replica has " +
                                std::to_string(also) + " floats, the residual " +
                                std::to_string(residual));
}

/// The 0-based element of a signed 1-based index (widened first, so that INT32_MIN negates).
std::size_t element_of(std::int32_t index) {
  const std::int64_t wide = index;
  return static_cast<std::size_t>(wide > 0 ? wide : -wide) - 1;
}

/// Clamps `value` to [-bound, bound]; returns what that removed.
float clamp_to_bound(float& value, float bound) {
  const float kept = std::fmin(std::fmax(value, -bound), bound);
  const float excess = value - kept;
  value = kept;
  return excess;
}

/// threshold_scan, with `also` (of residual.size() floats) receiving `scale * update` too
/// when Also is set; a template so that the plain scan carries no per-block test.
template <bool Also>
std::size_t scan(std::span<float> residual, std::span<const float> update, float threshold,
                 std::span<std::int32_t> indices, float scale, float* also) {
  const std::size_t n = residual.size();
  float* r = residual.data();
  const float* u = update.data();
  std::size_t hits = 0;
  const std::size_t capacity = indices.size();
  auto record = [&](std::size_t i) {
    if (hits < capacity) {
      const auto index = static_cast<std::int32_t>(i + 1);
      indices[hits] = r[i] > 0.0f ? index : -index;
    }
    ++hits;
  };
  const float_lanes limit = {threshold, threshold, threshold, threshold};
  const float_lanes factor = {scale, scale, scale, scale};
  const mask_lanes abs_bits = {float_abs_bits, float_abs_bits, float_abs_bits, float_abs_bits};
  std::size_t i = 0;
  for (; i + scan_block <= n; i += scan_block) {
    mask_lanes reached = {0, 0, 0, 0};
    for (std::size_t k = 0; k < scan_block; k += lanes) {
      float_lanes rv, uv;
      std::memcpy(&rv, r + i + k, sizeof rv);
      std::memcpy(&uv, u + i + k, sizeof uv);
      const float_lanes change = factor * uv;
      rv += change;
      std::memcpy(r + i + k, &rv, sizeof rv);
      if constexpr (Also) {
        float_lanes av;
        std::memcpy(&av, also + i + k, sizeof av);
        av += change;
        std::memcpy(also + i + k, &av, sizeof av);
      }
      reached |= reinterpret_cast<float_lanes>(reinterpret_cast<mask_lanes>(rv) & abs_bits) >= limit;
    }
    const std::int32_t any = reached[0] | reached[1] | reached[2] | reached[3];
    if (any != 0) [[unlikely]] {
      for (std::size_t k = 0; k < scan_block; ++k)
        if (std::fabs(r[i + k]) >= threshold) record(i + k);
    }
  }
  for (; i < n; ++i) {
    const float change = scale * u[i];
    r[i] += change;
    if constexpr (Also)
      also[i] += change;
    if (std::fabs(r[i]) >= threshold) record(i);
  }
  return hits;
}

} // namespace

std::size_t threshold_scan(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::int32_t> indices, float scale,
                           std::span<float> also) {
  require_also_size("threshold_scan", also.size(), residual.size());
  if (const auto hits = threshold_scan_avx512(residual, update, threshold, indices, scale,
                                              also.empty() ? nullptr : also.data()))
    return *hits;
  return threshold_scan_portable(residual, update, threshold, indices, scale, also);
}

std::size_t threshold_scan_portable(std::span<float> residual, std::span<const float> update,
                                    float threshold, std::span<std::int32_t> indices,
                                    float scale, std::span<float> also) {
  require_also_size("threshold_scan_portable", also.size(), residual.size());
  return also.empty() ? scan<false>(residual, update, threshold, indices, scale, nullptr)
                      : scan<true>(residual, update, threshold, indices, scale, also.data());
}

namespace {

/// clip_to_bound, taking what it removes out of `also` too when Also is set.
template <bool Also>
clip_result clip(std::span<float> residual, float bound, float* also) {
  // Lanes of partial sums per block, so that the clamp and the sum vectorise; the blocks'
  // sums go into a double, which keeps the total exact enough over millions of elements.
  constexpr std::size_t block = 256;
  const float_lanes high = {bound, bound, bound, bound};
  const float_lanes low = -high;
  float* r = residual.data();
  const std::size_t n = residual.size();
  clip_result out;
  std::size_t i = 0;
  for (; i + block <= n; i += block) {
    float_lanes part = {0.0f, 0.0f, 0.0f, 0.0f};
    float_lanes part_magnitude = {0.0f, 0.0f, 0.0f, 0.0f};
    for (std::size_t k = 0; k < block; k += lanes) {
      float_lanes rv;
      std::memcpy(&rv, r + i + k, sizeof rv);
      float_lanes kept = rv > high ? high : rv;
      kept = kept < low ? low : kept;
      const float_lanes excess = rv - kept;
      part += excess;
      part_magnitude += excess < 0.0f ? -excess : excess;
      std::memcpy(r + i + k, &kept, sizeof kept);
      if constexpr (Also) {
        float_lanes av;
        std::memcpy(&av, also + i + k, sizeof av);
        av -= excess;
        std::memcpy(also + i + k, &av, sizeof av);
      }
    }
    out.removed += static_cast<double>(part[0] + part[1] + part[2] + part[3]);
    out.magnitude += static_cast<double>(part_magnitude[0] + part_magnitude[1] +
                                         part_magnitude[2] + part_magnitude[3]);
  }
  for (; i < n; ++i) {
    const float excess = clamp_to_bound(r[i], bound);
    out.removed += static_cast<double>(excess);
    out.magnitude += std::fabs(static_cast<double>(excess));
    if constexpr (Also)
      also[i] -= excess;
  }
  return out;
}

} // namespace

clip_result clip_to_bound(std::span<float> residual, float bound, std::span<float> also) {
  require_also_size("clip_to_bound", also.size(), residual.size());
  return also.empty() ? clip<false>(residual, bound, nullptr)
                      : clip<true>(residual, bound, also.data());
}

clip_result clip_listed_to_bound(std::span<float> residual,
                                 std::span<const std::int32_t> indices, float bound,
                                 std::span<float> also) {
  require_also_size("clip_listed_to_bound", also.size(), residual.size());
  clip_result out;
  for (const std::int32_t index : indices) {
    const std::size_t i = element_of(index);
    const float excess = clamp_to_bound(residual[i], bound);
    out.removed += static_cast<double>(excess);
    out.magnitude += std::fabs(static_cast<double>(excess));
    if (!also.empty())
      also[i] -= excess;
  }
  return out;
}

void threshold_commit(std::span<float> residual, std::span<const std::int32_t> indices,
                      float threshold) {
  for (const std::int32_t index : indices) {
    residual[element_of(index)] += index > 0 ? -threshold : threshold;
  }
}

void threshold_decode_add(std::span<const std::byte> payload, float threshold,
                          std::span<float> target) {
  const std::size_t count = payload.size() / 4;
  for (std::size_t k = 0; k < count; ++k) {
    const auto index = static_cast<std::int32_t>(load_word(payload.data() + 4 * k));
    target[element_of(index)] += index > 0 ? threshold : -threshold;
  }
}

} // namespace strom::compute
