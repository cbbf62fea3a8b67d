#include "strom/compute/encoders/magnitude_select.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "strom/compute/encoders/finite_magnitude.hpp"
#include "strom/compute/codecs/float_lanes.hpp"
#include "strom/compute/encoders/magnitude_select_avx512.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t lanes = float_lane_count;
/// Elements summed in float lanes before the sum goes into the double, and the power of two
/// they are scaled by there, so that no sum of finite magnitudes overflows (as in
/// magnitude_select_avx512.cpp).
constexpr std::size_t sum_block = 256;
constexpr float sum_shrink = 1.0f / 512.0f;

} // namespace

magnitude_selection magnitude_select(std::span<const float> values, float threshold,
                                     std::span<std::int32_t> indices) {
  if (const auto selection = magnitude_select_avx512(values, threshold, indices))
    return *selection;
  return magnitude_select_portable(values, threshold, indices);
}

magnitude_selection magnitude_select_portable(std::span<const float> values, float threshold,
                                              std::span<std::int32_t> indices) {
  magnitude_selection out;
  const float* v = values.data();
  // Lists element i; false when the list is full (the selection ends there).
  const auto record = [&](std::size_t i) {
    if (out.hits == indices.size()) {
      out.hits = indices.size() + 1;
      return false;
    }
    const auto index = static_cast<std::int32_t>(i + 1);
    indices[out.hits++] = v[i] > 0.0f ? index : -index;
    out.selected_mass += static_cast<double>(finite_magnitude(v[i]));
    return true;
  };
  const float_lanes limit = {threshold, threshold, threshold, threshold};
  const float largest_value = std::numeric_limits<float>::max();
  const float_lanes largest = {largest_value, largest_value, largest_value, largest_value};
  const float_lanes zero = {0.0f, 0.0f, 0.0f, 0.0f};
  const std::size_t whole = values.size() - values.size() % lanes;
  std::size_t i = 0;
  while (i < whole) {
    const std::size_t end = std::min(whole, i + sum_block);
    float_lanes part = zero;
    for (; i < end; i += lanes) {
      float_lanes x;
      std::memcpy(&x, v + i, sizeof x);
      const float_lanes magnitude = x < 0.0f ? -x : x;
      part += (magnitude == magnitude ? (magnitude < largest ? magnitude : largest) : zero) *
              sum_shrink;
      const mask_lanes reached = magnitude >= limit;
      if (reached[0] | reached[1] | reached[2] | reached[3])
        for (std::size_t k = 0; k < lanes; ++k)
          if (reached[k] && !record(i + k))
            return out;
    }
    out.total_mass += (static_cast<double>(part[0]) + part[1] + part[2] + part[3]) / sum_shrink;
  }
  for (; i < values.size(); ++i) {
    out.total_mass += static_cast<double>(finite_magnitude(v[i]));
    if (std::fabs(v[i]) >= threshold && !record(i))
      return out;
  }
  return out;
}

} // namespace strom::compute
