#include "strom/compute/codecs/two_bit_codec.hpp"

#include <algorithm>

#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t values_per_word = 16;
constexpr std::uint32_t code_plus = 0b11;   // MXNet posbits
constexpr std::uint32_t code_minus = 0b10;  // MXNet negbits

/// Bit offset of element j's code inside its word: MXNet puts element j in byte j / 4,
/// first element of a byte in the top bit pair.
constexpr unsigned code_shift(std::size_t j) noexcept {
  return static_cast<unsigned>(8 * (j / 4) + 2 * (3 - j % 4));
}

} // namespace

std::uint32_t two_bit_padding_bits(std::size_t elements) noexcept {
  const std::size_t used = elements % values_per_word;
  if (used == 0) return 0;
  std::uint32_t used_bits = 0;
  for (std::size_t j = 0; j < used; ++j) used_bits |= 0b11u << code_shift(j);
  return ~used_bits;
}

std::size_t two_bit_encode(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::uint32_t> words) {
  const std::size_t n = residual.size();
  std::size_t values = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::size_t begin = w * values_per_word;
    const std::size_t end = std::min(n, begin + values_per_word);
    std::uint32_t word = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const float v = residual[i] + update[i];
      const bool plus = v >= threshold;
      const bool minus = v <= -threshold;
      const std::uint32_t code = plus ? code_plus : (minus ? code_minus : 0u);
      word |= code << code_shift(i - begin);
      values += (plus || minus) ? 1u : 0u;
      residual[i] = v - (plus ? threshold : 0.0f) + (minus ? threshold : 0.0f);
    }
    words[w] = word;
  }
  return values;
}

void two_bit_decode_add(std::span<const std::byte> payload, float threshold,
                        std::span<float> target) {
  const std::size_t n = target.size();
  for (std::size_t w = 0; w * values_per_word < n; ++w) {
    const std::uint32_t word = load_word(payload.data() + 4 * w);
    if (word == 0) continue;
    const std::size_t begin = w * values_per_word;
    const std::size_t end = std::min(n, begin + values_per_word);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t code = (word >> code_shift(i - begin)) & 0b11u;
      if (code == code_plus)
        target[i] += threshold;
      else if (code == code_minus)
        target[i] -= threshold;
    }
  }
}

} // namespace strom::compute
