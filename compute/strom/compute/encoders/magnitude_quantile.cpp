#include "strom/compute/encoders/magnitude_quantile.hpp"

#include <algorithm>

#include "strom/compute/encoders/finite_magnitude.hpp"

namespace strom::compute {

float magnitude_quantile(std::span<const float> values, double keep, std::size_t start,
                         std::vector<float>& workspace, std::size_t sample) {
  const std::size_t n = values.size();
  if (n == 0 || sample == 0)
    return 0.0f;
  const std::size_t taken = std::min(n, sample);
  const std::size_t stride = n / taken;  // taken * stride <= n, so every index is in range
  const std::size_t first = start % stride;
  workspace.resize(taken);
  for (std::size_t k = 0; k < taken; ++k)
    workspace[k] = finite_magnitude(values[first + k * stride]);
  const double below = std::clamp(1.0 - keep, 0.0, 1.0) * static_cast<double>(taken);
  const auto rank = std::min(taken - 1, static_cast<std::size_t>(below));
  std::nth_element(workspace.begin(), workspace.begin() + static_cast<std::ptrdiff_t>(rank),
                   workspace.end());
  return workspace[rank];
}

} // namespace strom::compute
