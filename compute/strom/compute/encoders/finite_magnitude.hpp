#pragma once
// |value| as an ordered, finite number: NaN counts 0 and inf the largest float. What the
// calibrated encoding ranks (nth_element needs a strict weak order, which NaN breaks) and
// sums (one broken element must not hide what the rest hold).

#include <algorithm>
#include <cmath>
#include <limits>

namespace strom::compute {

/// |value|, NaN as 0 and at most the largest float.
inline float finite_magnitude(float value) noexcept {
  return std::isnan(value) ? 0.0f : std::min(std::fabs(value), std::numeric_limits<float>::max());
}

} // namespace strom::compute
