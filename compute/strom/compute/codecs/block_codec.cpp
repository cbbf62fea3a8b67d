#include "strom/compute/codecs/block_codec.hpp"

#include <fmt/format.h>

namespace strom::compute {

result<void> validate_blocks(std::span<const std::byte> payload, std::size_t elements) {
  if (payload.size() < 4 || payload.size() % 4 != 0)
    return error{fmt::format("blocks payload: length {} is not a positive multiple of 4",
                             payload.size())};
  const std::size_t words = payload.size() / 4;
  const std::size_t blocks = load_word(payload.data());
  if (blocks > (words - 1) / block_header_words)
    return error{fmt::format("blocks payload: {} blocks do not fit {} words", blocks, words)};
  std::size_t body_words = 1 + blocks * block_header_words;
  std::size_t covered = 0;  // elements before which the next block must not start
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::byte* at = payload.data() + 4 * (1 + b * block_header_words);
    const auto enc = static_cast<encoding>(load_word(at));
    const std::size_t offset = load_word(at + 4);
    const std::size_t count = load_word(at + 8);
    const std::size_t block_words = load_word(at + 16);
    if (enc == encoding::blocks
        || static_cast<unsigned>(enc) > static_cast<unsigned>(last_encoding))
      return error{fmt::format("blocks payload: block {} has encoding value {}, which a block "
                               "cannot hold", b, static_cast<unsigned>(enc))};
    if (offset < covered || count > elements || offset > elements - count)
      return error{fmt::format("blocks payload: block {} covers [{}, {}), outside [{}, {})", b,
                               offset, offset + count, covered, elements)};
    if (block_words > words - body_words)
      return error{fmt::format("blocks payload: block {} claims {} words, {} remain", b,
                               block_words, words - body_words)};
    const float scale = std::bit_cast<float>(load_word(at + 12));
    const auto part = payload.subspan(4 * body_words, 4 * block_words);
    if (auto ok = validate(enc, scale, part, count); !ok)
      return error{fmt::format("blocks payload: block {} at element {}: {}", b, offset,
                               ok.err().message)};
    covered = offset + count;
    body_words += block_words;
  }
  if (body_words != words)
    return error{fmt::format("blocks payload: {} words after the last block", words - body_words)};
  return success();
}

} // namespace strom::compute
