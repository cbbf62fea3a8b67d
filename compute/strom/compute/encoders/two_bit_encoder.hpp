#pragma once
// MXNet-style 2-bit gradient compression with residual (kvstore gradient_compression), for
// the parameter-server mode: every push is a fixed-size message of 16 values per word.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/codecs/encoded_update.hpp"

namespace strom::compute {

/// How a two_bit_encoder behaves.
struct two_bit_encoder_options {
  /// MXNet's default 2-bit threshold (GradientCompression, "threshold" parameter).
  static constexpr float default_threshold = 0.5f;
  float threshold = default_threshold;  ///< magnitude of every sent value
};

/// 2-bit-encodes successive updates of one flat buffer of `elements` floats.
class two_bit_encoder {
public:
  /// An encoder with a zero residual; throws std::invalid_argument on a bad threshold.
  two_bit_encoder(std::size_t elements, two_bit_encoder_options options = {});

  /// Adds `update` (elements() floats) into the residual and quantizes it; the payload is
  /// valid until the next encode call. Always a message: MXNet pushes every iteration.
  encoded_update encode(std::span<const float> update);

  /// Elements of the buffer.
  std::size_t elements() const noexcept { return residual_.size(); }
  /// What was added in but not yet sent.
  std::span<const float> residual() const noexcept { return residual_; }
  /// The threshold of every message.
  float threshold() const noexcept { return threshold_; }

private:
  float threshold_;
  std::vector<float> residual_;
  std::vector<std::uint32_t> words_;
};

} // namespace strom::compute
