#include "strom/compute/codecs/threshold_codec.hpp"

#include <cmath>
#include <cstring>

#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

namespace {

// Four floats at a time through GCC/Clang vector extensions (plain SSE2 on x86-64, NEON on
// arm64): the auto-vectoriser gives up on the add-compare-store loop because of its branch.
using float_lanes = float __attribute__((vector_size(16)));
using mask_lanes = std::int32_t __attribute__((vector_size(16)));
constexpr std::size_t lanes = 4;

// Elements checked per block before branching: only the rare block holding a hit branches.
constexpr std::size_t scan_block = 16;

constexpr std::int32_t float_abs_bits = 0x7fffffff;

} // namespace

std::size_t threshold_scan(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::int32_t> indices, float scale) {
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
      rv += factor * uv;
      std::memcpy(r + i + k, &rv, sizeof rv);
      reached |= reinterpret_cast<float_lanes>(reinterpret_cast<mask_lanes>(rv) & abs_bits) >= limit;
    }
    const std::int32_t any = reached[0] | reached[1] | reached[2] | reached[3];
    if (any != 0) [[unlikely]] {
      for (std::size_t k = 0; k < scan_block; ++k)
        if (std::fabs(r[i + k]) >= threshold) record(i + k);
    }
  }
  for (; i < n; ++i) {
    r[i] += scale * u[i];
    if (std::fabs(r[i]) >= threshold) record(i);
  }
  return hits;
}

double clip_to_bound(std::span<float> residual, float bound) {
  // Lanes of partial sums per block, so that the clamp and the sum vectorise; the blocks'
  // sums go into a double, which keeps the total exact enough over millions of elements.
  constexpr std::size_t block = 256;
  const float_lanes high = {bound, bound, bound, bound};
  const float_lanes low = -high;
  float* r = residual.data();
  const std::size_t n = residual.size();
  double removed = 0.0;
  std::size_t i = 0;
  for (; i + block <= n; i += block) {
    float_lanes part = {0.0f, 0.0f, 0.0f, 0.0f};
    for (std::size_t k = 0; k < block; k += lanes) {
      float_lanes rv;
      std::memcpy(&rv, r + i + k, sizeof rv);
      float_lanes kept = rv > high ? high : rv;
      kept = kept < low ? low : kept;
      part += rv - kept;
      std::memcpy(r + i + k, &kept, sizeof kept);
    }
    removed += static_cast<double>(part[0] + part[1] + part[2] + part[3]);
  }
  for (; i < n; ++i) {
    const float kept = std::fmin(std::fmax(r[i], -bound), bound);
    removed += static_cast<double>(r[i] - kept);
    r[i] = kept;
  }
  return removed;
}

void threshold_commit(std::span<float> residual, std::span<const std::int32_t> indices,
                      float threshold) {
  for (const std::int32_t index : indices) {
    if (index > 0)
      residual[static_cast<std::size_t>(index) - 1] -= threshold;
    else
      residual[static_cast<std::size_t>(-static_cast<std::int64_t>(index)) - 1] += threshold;
  }
}

void threshold_decode_add(std::span<const std::byte> payload, float threshold,
                          std::span<float> target) {
  const std::size_t count = payload.size() / 4;
  for (std::size_t k = 0; k < count; ++k) {
    const auto index = static_cast<std::int32_t>(load_word(payload.data() + 4 * k));
    if (index > 0)
      target[static_cast<std::size_t>(index) - 1] += threshold;
    else
      target[static_cast<std::size_t>(-static_cast<std::int64_t>(index)) - 1] -= threshold;
  }
}

} // namespace strom::compute
