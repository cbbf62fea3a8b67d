#include "strom/compute/codecs/decode.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/codecs/little_endian.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/codecs/two_bit_codec.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t word_bytes = 4;

result<void> expect_words(encoding enc, std::size_t payload_bytes, std::size_t words,
                          std::size_t elements) {
  if (payload_bytes != words * word_bytes)
    return error{fmt::format("{} payload for {} elements: expected {} bytes, found {}",
                             to_string(enc), elements, words * word_bytes, payload_bytes)};
  return success();
}

result<void> expect_threshold(encoding enc, float threshold) {
  if (!std::isfinite(threshold) || threshold <= 0.0f)
    return error{fmt::format("{} payload: threshold must be finite and > 0, found {}",
                             to_string(enc), threshold)};
  return success();
}

result<void> validate_sixteen_per_word(encoding enc, float threshold,
                                       std::span<const std::byte> payload, std::size_t n) {
  if (auto ok = expect_threshold(enc, threshold); !ok) return ok;
  const std::size_t words = (n + 15) / 16;
  if (auto ok = expect_words(enc, payload.size(), words, n); !ok) return ok;
  if (words > 0) {
    const std::uint32_t last = load_word(payload.data() + (words - 1) * word_bytes);
    const std::uint32_t padding =
        enc == encoding::bitmap ? bitmap_padding_bits(n) : two_bit_padding_bits(n);
    if ((last & padding) != 0)
      return error{fmt::format("{} payload for {} elements: padding bits set in last word {:#010x}",
                               to_string(enc), n, last)};
  }
  if (enc == encoding::two_bit) {
    constexpr std::uint32_t low_bits = 0x55555555u;
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint32_t word = load_word(payload.data() + w * word_bytes);
      // Code 01 (low bit without high bit) is never produced by the encoder.
      if ((word & low_bits & ~(word >> 1)) != 0)
        return error{fmt::format("two_bit payload: word {} ({:#010x}) holds the undefined code 01",
                                 w, word)};
    }
  }
  return success();
}

result<void> validate_threshold(float threshold, std::span<const std::byte> payload,
                                std::size_t n) {
  if (auto ok = expect_threshold(encoding::threshold, threshold); !ok) return ok;
  if (payload.size() % word_bytes != 0)
    return error{fmt::format("threshold payload: length {} is not a multiple of 4", payload.size())};
  const std::size_t count = payload.size() / word_bytes;
  for (std::size_t k = 0; k < count; ++k) {
    const auto index = static_cast<std::int32_t>(load_word(payload.data() + k * word_bytes));
    const auto magnitude = static_cast<std::uint64_t>(std::llabs(static_cast<long long>(index)));
    if (index == 0 || magnitude > n)
      return error{fmt::format("threshold payload: index {} at entry {} is outside [1, {}]",
                               index, k, n)};
  }
  return success();
}

result<void> validate_fp32(std::span<const std::byte> payload, std::size_t n) {
  if (auto ok = expect_words(encoding::dense_fp32, payload.size(), n, n); !ok) return ok;
  // One branch-free pass the compiler vectorises (an average's sum is a whole model); the
  // element is looked for only when one is not finite.
  // A value is not finite when its exponent bits are all set: (word & e) ^ e is 0 then.
  constexpr std::uint32_t exponent_bits = 0x7f800000u;
  std::uint32_t least = exponent_bits;
  for (std::size_t i = 0; i < n; ++i)
    least = std::min(least, (load_word(payload.data() + i * word_bytes) & exponent_bits)
                              ^ exponent_bits);
  if (least != 0) return success();
  for (std::size_t i = 0; i < n; ++i) {
    float value;
    std::memcpy(&value, payload.data() + i * word_bytes, sizeof value);
    if (!std::isfinite(value))
      return error{fmt::format("dense_fp32 payload: value {} at element {} is not finite", value, i)};
  }
  return success();
}

result<void> validate_fp16(std::span<const std::byte> payload, std::size_t n) {
  if (auto ok = expect_words(encoding::dense_fp16, payload.size(), fp16_words(n), n); !ok)
    return ok;
  constexpr std::uint16_t half_exponent = 0x7c00u;
  for (std::size_t i = 0; i < 2 * fp16_words(n); ++i) {
    const std::uint32_t word = load_word(payload.data() + (i / 2) * word_bytes);
    const auto half = static_cast<std::uint16_t>(i % 2 == 0 ? word : word >> 16);
    if (i >= n) {
      if (half != 0)
        return error{fmt::format("dense_fp16 payload for {} elements: padding half is {:#06x}",
                                 n, half)};
    } else if ((half & half_exponent) == half_exponent) {
      return error{fmt::format("dense_fp16 payload: half {:#06x} at element {} is not finite",
                               half, i)};
    }
  }
  return success();
}

} // namespace

const char* to_string(encoding enc) noexcept {
  switch (enc) {
    case encoding::threshold: return "threshold";
    case encoding::bitmap: return "bitmap";
    case encoding::two_bit: return "two_bit";
    case encoding::dense_fp32: return "dense_fp32";
    case encoding::dense_fp16: return "dense_fp16";
    case encoding::blocks: return "blocks";
  }
  return "unknown";
}

result<void> validate(encoding enc, float threshold, std::span<const std::byte> payload,
                      std::size_t elements) {
  switch (enc) {
    case encoding::threshold: return validate_threshold(threshold, payload, elements);
    case encoding::bitmap:
    case encoding::two_bit: return validate_sixteen_per_word(enc, threshold, payload, elements);
    case encoding::dense_fp32: return validate_fp32(payload, elements);
    case encoding::dense_fp16: return validate_fp16(payload, elements);
    case encoding::blocks: return validate_blocks(payload, elements);
  }
  return error{fmt::format("update payload: unknown encoding value {}",
                           static_cast<unsigned>(enc))};
}

namespace {

/// decode_add after validate() accepted the payload.
void add_validated(encoding enc, float threshold, std::span<const std::byte> payload,
                   std::span<float> target) {
  switch (enc) {
    case encoding::threshold: threshold_decode_add(payload, threshold, target); break;
    case encoding::bitmap: bitmap_decode_add(payload, threshold, target); break;
    case encoding::two_bit: two_bit_decode_add(payload, threshold, target); break;
    case encoding::dense_fp32: fp32_decode_add(payload, target); break;
    case encoding::dense_fp16: fp16_decode_add(payload, target); break;
    case encoding::blocks:
      for_each_block(payload, [target](const block_header& block, std::span<const std::byte> part) {
        add_validated(block.enc, block.scale, part, target.subspan(block.offset, block.count));
      });
      break;
  }
}

} // namespace

result<void> decode_add(encoding enc, float threshold, std::span<const std::byte> payload,
                        std::span<float> target) {
  if (auto ok = validate(enc, threshold, payload, target.size()); !ok) return ok;
  add_validated(enc, threshold, payload, target);
  return success();
}

} // namespace strom::compute
