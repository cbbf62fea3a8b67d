#include "strom/compute/codecs/bitmap_codec.hpp"

#include <algorithm>
#include <bit>

#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t values_per_word = 16;
constexpr unsigned sign_shift = 16;  // the sign bits sit in the word's upper half

} // namespace

std::uint32_t bitmap_padding_bits(std::size_t elements) noexcept {
  const std::size_t used = elements % values_per_word;
  if (used == 0) return 0;
  const std::uint32_t used_bits = (1u << used) - 1u;
  return ~(used_bits | (used_bits << sign_shift));
}

std::size_t bitmap_encode(std::span<float> residual, float threshold,
                          std::span<std::uint32_t> words) {
  const std::size_t n = residual.size();
  const float half = threshold * 0.5f;
  std::size_t values = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::size_t begin = w * values_per_word;
    const std::size_t end = std::min(n, begin + values_per_word);
    std::uint32_t word = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const float v = residual[i];
      const unsigned e = static_cast<unsigned>(i - begin);
      // Branch-free so that the loop vectorises: each state both sets its bits and moves
      // the residual by what the receiver will add.
      const bool plus = v >= threshold;
      const bool minus = v <= -threshold;
      const bool minus_half = !minus && v <= -half;
      word |= static_cast<std::uint32_t>(plus || minus) << e;
      word |= static_cast<std::uint32_t>(minus || minus_half) << (e + sign_shift);
      residual[i] = v - (plus ? threshold : 0.0f) + (minus ? threshold : 0.0f) +
                    (minus_half ? half : 0.0f);
    }
    words[w] = word;
    values += static_cast<std::size_t>(std::popcount((word | (word >> sign_shift)) & 0xffffu));
  }
  return values;
}

void bitmap_decode_add(std::span<const std::byte> payload, float threshold,
                       std::span<float> target) {
  const std::size_t n = target.size();
  const float half = threshold * 0.5f;
  for (std::size_t w = 0; w * values_per_word < n; ++w) {
    const std::uint32_t word = load_word(payload.data() + 4 * w);
    if (word == 0) continue;  // the common case in a sparse-ish bitmap
    const std::size_t begin = w * values_per_word;
    const std::size_t end = std::min(n, begin + values_per_word);
    for (std::size_t i = begin; i < end; ++i) {
      const unsigned e = static_cast<unsigned>(i - begin);
      const bool step = ((word >> e) & 1u) != 0;
      const bool sign = ((word >> (e + sign_shift)) & 1u) != 0;
      if (step)
        target[i] += sign ? -threshold : threshold;
      else if (sign)
        target[i] -= half;
    }
  }
}

} // namespace strom::compute
