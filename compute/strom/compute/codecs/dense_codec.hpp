#pragma once
// Dense payloads for averaging and snapshots: fp32 as is, or fp16 (IEEE binary16, two per
// 32-bit word, element 2k in the low half), converted with round-to-nearest-even.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/codecs/encoded_update.hpp"

namespace strom::compute {

/// Words an fp16 payload of `elements` elements takes: ceil(elements / 2).
constexpr std::size_t fp16_words(std::size_t elements) noexcept { return (elements + 1) / 2; }

/// The IEEE half nearest to `value` (ties to even). Finite values beyond the half range
/// saturate to +/-65504 so that a dense update stays decodable; NaN stays NaN.
std::uint16_t float_to_half(float value) noexcept;

/// The float `half` stands for (exact).
float half_to_float(std::uint16_t half) noexcept;

/// Converts `values` into `words` (fp16_words(values.size()) of them); the padding half is 0.
void fp16_encode(std::span<const float> values, std::span<std::uint32_t> words);

/// Adds the little-endian fp32 `payload` into `target`. Precondition (checked by
/// decode_add): target.size() finite floats.
void fp32_decode_add(std::span<const std::byte> payload, std::span<float> target);

/// Adds the little-endian fp16 `payload` into `target`. Precondition (checked by
/// decode_add): fp16_words(target.size()) words of finite halves, padding half 0.
void fp16_decode_add(std::span<const std::byte> payload, std::span<float> target);

/// A dense fp32 update viewing `values` directly (no copy): valid while `values` is.
encoded_update dense_fp32_update(std::span<const float> values) noexcept;

/// Produces dense fp16 updates of one flat buffer of `elements` floats.
class fp16_encoder {
public:
  /// An encoder whose workspace holds fp16_words(elements) words.
  explicit fp16_encoder(std::size_t elements);

  /// Converts `values` (elements() floats; throws std::invalid_argument otherwise); the
  /// payload is valid until the next encode call.
  encoded_update encode(std::span<const float> values);

  /// Elements of the buffer.
  std::size_t elements() const noexcept { return elements_; }

private:
  std::size_t elements_;
  std::vector<std::uint32_t> words_;
};

} // namespace strom::compute
