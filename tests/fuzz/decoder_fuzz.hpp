#pragma once
// The shared body of the per-decoder fuzz targets. Input layout, little-endian:
//   bytes 0-1  target size in elements (0..65535)
//   bytes 2-5  threshold as a float
//   bytes 6-   payload
// Beyond what AddressSanitizer catches, it aborts when decode_add breaks its contract: a
// refused payload must leave the target untouched, an accepted one must leave it finite.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "strom/compute/codecs/decode.hpp"

namespace strom::fuzz {

/// Bytes before the payload: the target size and the threshold.
inline constexpr std::size_t decoder_input_prefix = 6;

/// Marks the target so that an untouched one can be told apart from a decoded one.
inline constexpr float untouched_marker = 0.25f;

inline int fuzz_decoder(compute::encoding enc, const std::uint8_t* data, std::size_t size) {
  if (size < decoder_input_prefix)
    return 0;
  std::uint16_t elements;
  float threshold;
  std::memcpy(&elements, data, sizeof elements);
  std::memcpy(&threshold, data + 2, sizeof threshold);
  // decode_add wants 4-byte aligned payloads; the fuzzer's buffer is only byte-aligned here.
  const std::size_t payload_bytes = size - decoder_input_prefix;
  std::vector<std::uint32_t> payload((payload_bytes + 3) / 4);
  if (payload_bytes != 0)
    std::memcpy(payload.data(), data + decoder_input_prefix, payload_bytes);
  std::vector<float> target(elements, untouched_marker);
  const auto decoded = compute::decode_add(
      enc, threshold, std::as_bytes(std::span<const std::uint32_t>(payload)).first(payload_bytes),
      target);
  for (const float value : target) {
    if (!decoded.ok() && value != untouched_marker)
      std::abort();  // a refused payload wrote into the target
    if (decoded.ok() && !std::isfinite(value))
      std::abort();  // an accepted payload produced a non-finite value
  }
  return 0;
}

} // namespace strom::fuzz
