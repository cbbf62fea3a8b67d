#include "strom/compute/encoders/two_bit_encoder.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "strom/compute/codecs/two_bit_codec.hpp"

namespace strom::compute {

two_bit_encoder::two_bit_encoder(std::size_t elements, two_bit_encoder_options options)
  : threshold_(options.threshold), residual_(elements, 0.0f), words_(two_bit_words(elements), 0u) {
  if (!std::isfinite(threshold_) || threshold_ <= 0.0f)
    throw std::invalid_argument("two_bit_encoder: threshold must be finite and > 0, got " +
                                std::to_string(threshold_));
}

encoded_update two_bit_encoder::encode(std::span<const float> update) {
  if (update.size() != residual_.size())
    throw std::invalid_argument("two_bit_encoder: update of " + std::to_string(update.size()) +
                                " elements for a buffer of " + std::to_string(residual_.size()));
  const std::size_t values = two_bit_encode(residual_, update, threshold_, words_);
  return {encoding::two_bit, threshold_, residual_.size(), values,
          std::as_bytes(std::span<const std::uint32_t>(words_))};
}

} // namespace strom::compute
