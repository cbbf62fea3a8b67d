#pragma once
// The one entry point through which received update payloads reach a parameter buffer.
// The frame reader (frames/) validates the frame header and hands the payload here; the
// codecs validate the payload itself against the target.

#include <cstddef>
#include <cstdint>
#include <span>

#include "strom/compute/result.hpp"

namespace strom::compute {

/// How an update payload is encoded. The values are stable: they travel in frames.
enum class encoding : std::uint8_t {
  threshold = 0,   ///< sparse signed 1-based int32 indices, each +/- threshold
  /// 2 bits per element, 16 per word (libnd4j encodeBitmap): element 16w+e has its step bit
  /// at bit e and its sign bit at bit e+16 of word w. step,sign = 0,0: no change; 1,0:
  /// +threshold; 1,1: -threshold; 0,1: -threshold/2 (the half-threshold state). Padding 0.
  bitmap = 1,
  two_bit = 2,     ///< MXNet 2-bit: 16 values per 32-bit word, +/- threshold or 0
  dense_fp32 = 3,  ///< every element as a float
  dense_fp16 = 4,  ///< every element as an IEEE half
  /// several parts of the buffer, each in its own encoding with its own magnitude
  /// (block_codec.hpp)
  blocks = 5,
};

/// The highest value an encoding has: frames and snapshots refuse any above it.
inline constexpr encoding last_encoding = encoding::blocks;

/// The encoding's name ("threshold", "two_bit", ...); "unknown" for values off the enum.
const char* to_string(encoding enc) noexcept;

/// Checks `payload` as decode_add does for a target of `elements` elements, touching nothing:
/// what a receiver that adds the payload later (or only passes it on) checks on receipt.
result<void> validate(encoding enc, float threshold, std::span<const std::byte> payload,
                      std::size_t elements);

/// Decodes `payload` (little-endian, 4-byte aligned) and adds it into `target`, whose size is
/// the number of elements the payload covers. Refuses, without touching `target`, any
/// payload whose length, indices or values do not fit `target` or the encoding.
result<void> decode_add(encoding enc, float threshold, std::span<const std::byte> payload,
                        std::span<float> target);

} // namespace strom::compute
