#pragma once
// Float reductions that vectorise: a plain `s += x[i]` loop is a serial dependency chain the
// compiler may not reorder, so the sums run in independent lanes and fold at the end.

#include <cstddef>

namespace strom::compute {

/// Independent partial sums; 8 fills one AVX register or two SSE registers.
inline constexpr std::size_t sum_lanes = 8;

/// The sum of term(i) over [0, n), accumulated in sum_lanes lanes.
template <class Term>
inline float lane_sum(std::size_t n, Term term) noexcept {
  float lanes[sum_lanes] = {};
  std::size_t i = 0;
  for (; i + sum_lanes <= n; i += sum_lanes)
    for (std::size_t j = 0; j < sum_lanes; ++j)
      lanes[j] += term(i + j);
  float total = 0.0f;
  for (; i < n; ++i)
    total += term(i);
  for (std::size_t j = 0; j < sum_lanes; ++j)
    total += lanes[j];
  return total;
}

/// The sum of values[0, n).
inline float sum(const float* values, std::size_t n) noexcept {
  return lane_sum(n, [values](std::size_t i) { return values[i]; });
}

/// The sum of (values[i] - center)^2 over [0, n).
inline float squared_deviations(const float* values, float center, std::size_t n) noexcept {
  return lane_sum(n, [values, center](std::size_t i) {
    const float deviation = values[i] - center;
    return deviation * deviation;
  });
}

/// The sum of weights[i] * (values[i] - center) over [0, n).
inline float centered_dot(const float* weights, const float* values, float center,
                          std::size_t n) noexcept {
  return lane_sum(n, [weights, values, center](std::size_t i) {
    return weights[i] * (values[i] - center);
  });
}

} // namespace strom::compute
