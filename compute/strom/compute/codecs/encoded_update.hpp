#pragma once
// What an encoder hands to the frame builder: a view of one encoded payload. The bytes live
// in the encoder's reused workspace and stay valid until its next encode call.

#include <cstddef>
#include <span>

#include "strom/compute/codecs/decode.hpp"

namespace strom::compute {

/// One encoded update, ready to be put into a frame.
struct encoded_update {
  encoding enc = encoding::threshold;   ///< how `payload` is encoded
  float threshold = 0.0f;               ///< magnitude of each sent step (0 for dense)
  std::size_t elements = 0;             ///< elements of the flat buffer the payload covers
  std::size_t values = 0;               ///< non-zero values carried (the density numerator)
  std::span<const std::byte> payload;   ///< little-endian words, length a multiple of 4
};

} // namespace strom::compute
