#pragma once
// Payload words are little-endian. Encoders write native uint32 words and hand them out as
// bytes, which is only the wire format on a little-endian host; the assert keeps it honest.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strom::compute {

static_assert(std::endian::native == std::endian::little,
              "strom codecs write payload words in host order and need a little-endian host");

/// The 32-bit word at `bytes` (no alignment needed: frames only promise 4-byte multiples).
inline std::uint32_t load_word(const std::byte* bytes) noexcept {
  std::uint32_t word;
  std::memcpy(&word, bytes, sizeof word);
  return word;
}

} // namespace strom::compute
