#pragma once
// MXNet 2-bit gradient compression (src/kvstore/gradient_compression): 16 values per 32-bit
// word. Element j of a word lives in byte j / 4, in the bit pair at (3 - j % 4) * 2, the
// first element of a byte in its top bits, as MXNet's quantize_2bit lays it out:
//   11: +threshold    10: -threshold    00: no change    01: never produced, refused

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute {

/// Words a 2-bit payload of `elements` elements takes: ceil(elements / 16).
constexpr std::size_t two_bit_words(std::size_t elements) noexcept { return (elements + 15) / 16; }

/// The bits of the last word that cover no element (must be zero in a payload).
std::uint32_t two_bit_padding_bits(std::size_t elements) noexcept;

/// Adds `update` into `residual`, quantizes it to +/- threshold or 0 into `words`
/// (two_bit_words(residual.size()) of them) and takes what was sent out of the residual.
/// Returns the number of non-zero codes.
std::size_t two_bit_encode(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::uint32_t> words);

/// Adds the little-endian 2-bit `payload` into `target`. Precondition (checked by
/// decode_add): two_bit_words(target.size()) words, no 01 codes, padding bits zero.
void two_bit_decode_add(std::span<const std::byte> payload, float threshold,
                        std::span<float> target);

} // namespace strom::compute
