#pragma once

#include <cstddef>

namespace strom::compute {

/// The shape of one sample's tensor; a batch is laid out [batch][channels][height][width].
struct shape {
  std::size_t channels = 1;
  std::size_t height = 1;
  std::size_t width = 1;

  /// Floats per sample.
  std::size_t size() const noexcept { return channels * height * width; }
  friend bool operator==(const shape&, const shape&) = default;
};

} // namespace strom::compute
