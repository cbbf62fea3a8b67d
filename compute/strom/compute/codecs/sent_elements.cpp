#include "strom/compute/codecs/sent_elements.hpp"

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/codecs/little_endian.hpp"

namespace strom::compute {

namespace {

void clear_threshold(std::span<const std::byte> payload, std::span<float> values) {
  const std::size_t count = payload.size() / 4;
  for (std::size_t k = 0; k < count; ++k) {
    const auto index = static_cast<std::int32_t>(load_word(payload.data() + 4 * k));
    const auto element = static_cast<std::size_t>(index > 0 ? index : -static_cast<std::int64_t>(index));
    if (element == 0 || element > values.size())
      throw std::invalid_argument("clear_sent_elements: index " + std::to_string(index) +
                                  " outside " + std::to_string(values.size()) + " elements");
    values[element - 1] = 0.0f;
  }
}

void clear_bitmap(std::span<const std::byte> payload, std::span<float> values) {
  const std::size_t words = payload.size() / 4;
  if (words * 16 < values.size())
    throw std::invalid_argument("clear_sent_elements: " + std::to_string(words) +
                                " bitmap words for " + std::to_string(values.size()) + " elements");
  for (std::size_t w = 0; w < words; ++w) {
    // An element moves when its step bit or its sign bit (the half step) is set.
    const std::uint32_t word = load_word(payload.data() + 4 * w);
    for (std::uint32_t moved = (word | (word >> 16)) & 0xffffu; moved != 0; moved &= moved - 1) {
      const std::size_t element = 16 * w + static_cast<std::size_t>(std::countr_zero(moved));
      if (element < values.size())
        values[element] = 0.0f;
    }
  }
}

} // namespace

void clear_sent_elements(const encoded_update& update, std::span<float> values) {
  if (update.elements != values.size())
    throw std::invalid_argument("clear_sent_elements: update of " +
                                std::to_string(update.elements) + " elements for " +
                                std::to_string(values.size()) + " values");
  switch (update.enc) {
  case encoding::threshold:
    return clear_threshold(update.payload, values);
  case encoding::bitmap:
    return clear_bitmap(update.payload, values);
  case encoding::blocks:
    // A dense block sends every element every step: masking it would end its momentum.
    for_each_block(update.payload, [values](const block_header& block,
                                            std::span<const std::byte> part) {
      const auto slice = values.subspan(block.offset, block.count);
      if (block.enc == encoding::threshold)
        clear_threshold(part, slice);
      else if (block.enc == encoding::bitmap)
        clear_bitmap(part, slice);
    });
    return;
  default:
    throw std::invalid_argument(std::string{"clear_sent_elements: "} + to_string(update.enc) +
                                " updates are not threshold-encoded");
  }
}

} // namespace strom::compute
