#pragma once
// Deeplearning4j bitmap encoding (libnd4j encodeBitmap/decodeBitmap): 2 bits per element,
// 16 elements per 32-bit word, a fixed 16x compression. Element e of word w is element
// 16 * w + e; its "step" bit is bit e of the word and its "sign" bit is bit e + 16:
//   step 0, sign 0: no change
//   step 1, sign 0: +threshold
//   step 1, sign 1: -threshold
//   step 0, sign 1: -threshold / 2 (the half-threshold state; as in DL4J it is only used
//                   for residuals in (-threshold, -threshold / 2])

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute {

/// Words a bitmap of `elements` elements takes: ceil(elements / 16).
constexpr std::size_t bitmap_words(std::size_t elements) noexcept { return (elements + 15) / 16; }

/// The bits of the last word that cover no element (must be zero in a payload).
std::uint32_t bitmap_padding_bits(std::size_t elements) noexcept;

/// Encodes `residual` into `words` (bitmap_words(residual.size()) of them) and takes every
/// encoded step out of the residual. Returns the number of non-zero codes.
std::size_t bitmap_encode(std::span<float> residual, float threshold,
                          std::span<std::uint32_t> words);

/// Adds the little-endian bitmap `payload` into `target`. Precondition (checked by
/// decode_add): bitmap_words(target.size()) words, padding bits zero.
void bitmap_decode_add(std::span<const std::byte> payload, float threshold,
                       std::span<float> target);

} // namespace strom::compute
