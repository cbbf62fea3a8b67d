#include "strom/compute/codecs/dense_codec.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

namespace {

// IEEE 754 binary32 / binary16 layout constants.
constexpr std::uint32_t float_abs_mask = 0x7fffffffu;
constexpr std::uint32_t float_inf = 0x7f800000u;
constexpr std::uint32_t float_min_normal_half = 0x38800000u;  // 2^-14, the smallest normal half
constexpr std::uint32_t float_half_underflow = 0x33000000u;   // 2^-25: at or below rounds to 0
constexpr std::uint32_t float_half_overflow = 0x477ff000u;    // 65520: at or above rounds to inf
constexpr std::uint32_t exponent_rebias = 112u << 23;         // 127 - 15, in float position
constexpr std::uint16_t half_max = 0x7bffu;                   // 65504
constexpr std::uint16_t half_inf = 0x7c00u;
constexpr std::uint16_t half_quiet_nan = 0x7e00u;
constexpr float half_subnormal_unit = 5.9604644775390625e-8f;  // 2^-24

} // namespace

std::uint16_t float_to_half(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & float_abs_mask;
  if (abs > float_inf) return sign | half_quiet_nan;
  if (abs == float_inf) return sign | half_inf;
  if (abs >= float_half_overflow) return sign | half_max;
  if (abs >= float_min_normal_half) {
    std::uint32_t half = (abs - exponent_rebias) >> 13;
    const std::uint32_t rest = abs & 0x1fffu;
    half += (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ? 1u : 0u;
    return static_cast<std::uint16_t>(sign | half);
  }
  if (abs <= float_half_underflow) return sign;
  // Subnormal half: the significand (with its implicit bit) shifted down to units of 2^-24.
  const std::uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
  const unsigned shift = 126u - (abs >> 23);
  std::uint32_t half = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1u);
  half += (rest > halfway || (rest == halfway && (half & 1u) != 0)) ? 1u : 0u;
  return static_cast<std::uint16_t>(sign | half);
}

float half_to_float(std::uint16_t half) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * half_subnormal_unit;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | float_inf | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent << 23) + exponent_rebias) | (mantissa << 13));
}

void fp16_encode(std::span<const float> values, std::span<std::uint32_t> words) {
  const std::size_t n = values.size();
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::uint32_t low = float_to_half(values[2 * w]);
    const std::uint32_t high = 2 * w + 1 < n ? float_to_half(values[2 * w + 1]) : 0u;
    words[w] = low | (high << 16);
  }
}

void fp32_decode_add(std::span<const std::byte> payload, std::span<float> target) {
  const std::byte* bytes = payload.data();
  for (std::size_t i = 0; i < target.size(); ++i) {
    float value;
    std::memcpy(&value, bytes + 4 * i, sizeof value);
    target[i] += value;
  }
}

void fp16_decode_add(std::span<const std::byte> payload, std::span<float> target) {
  const std::size_t n = target.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t word = load_word(payload.data() + 4 * (i / 2));
    target[i] += half_to_float(static_cast<std::uint16_t>(i % 2 == 0 ? word : word >> 16));
  }
}

encoded_update dense_fp32_update(std::span<const float> values) noexcept {
  return {encoding::dense_fp32, 0.0f, values.size(), values.size(), std::as_bytes(values)};
}

fp16_encoder::fp16_encoder(std::size_t elements)
  : elements_(elements), words_(fp16_words(elements), 0u) {}

encoded_update fp16_encoder::encode(std::span<const float> values) {
  if (values.size() != elements_)
    throw std::invalid_argument("fp16_encoder: " + std::to_string(values.size()) +
                                " values for a buffer of " + std::to_string(elements_));
  fp16_encode(values, words_);
  return {encoding::dense_fp16, 0.0f, elements_, elements_,
          std::as_bytes(std::span<const std::uint32_t>(words_))};
}

} // namespace strom::compute
