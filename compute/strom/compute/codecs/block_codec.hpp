#pragma once
// The `blocks` encoding: one update as several parts of the flat buffer, each encoded its own
// way with its own step magnitude, so that one frame carries every tensor of a model encoded
// as fits it (calibrated_blocks.hpp: sparse for large tensors, fp16 for small ones). Layout,
// little-endian 32-bit words: the block count B; B headers of five words (the block's
// encoding, first element, elements, step magnitude as a float's bits, payload words); then
// the B payloads in that order. Blocks lie in increasing order and never overlap; a block's
// payload is what its encoding would send for its elements alone (threshold indices count
// from the block's first element).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/little_endian.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Words of one block's header.
inline constexpr std::size_t block_header_words = 5;

/// One block of a `blocks` payload.
struct block_header {
  encoding enc = encoding::threshold;  ///< how the block's payload is encoded
  std::uint32_t offset = 0;            ///< first element, within the payload's buffer
  std::uint32_t count = 0;             ///< elements the block covers
  float scale = 0.0f;                  ///< magnitude of each sent step (0 for dense)
  std::uint32_t words = 0;             ///< payload words
};

/// Writes `header` into the five words at `at`.
inline void put_block_header(std::uint32_t* at, const block_header& header) noexcept {
  at[0] = static_cast<std::uint32_t>(header.enc);
  at[1] = header.offset;
  at[2] = header.count;
  at[3] = std::bit_cast<std::uint32_t>(header.scale);
  at[4] = header.words;
}

/// Checks a `blocks` payload for a buffer of `elements` elements: its length, every header
/// (order, bounds, an encoding other than blocks) and every block's payload as validate()
/// checks it. The error names the block and what is wrong.
result<void> validate_blocks(std::span<const std::byte> payload, std::size_t elements);

/// Calls `visit(header, block_payload)` for each block of a payload validate_blocks accepted.
template <class Visit>
void for_each_block(std::span<const std::byte> payload, Visit&& visit) {
  const std::size_t blocks = load_word(payload.data());
  std::size_t body = 4 * (1 + blocks * block_header_words);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::byte* at = payload.data() + 4 * (1 + b * block_header_words);
    const block_header header{static_cast<encoding>(load_word(at)), load_word(at + 4),
                              load_word(at + 8), std::bit_cast<float>(load_word(at + 12)),
                              load_word(at + 16)};
    visit(header, payload.subspan(body, 4 * std::size_t{header.words}));
    body += 4 * std::size_t{header.words};
  }
}

} // namespace strom::compute
