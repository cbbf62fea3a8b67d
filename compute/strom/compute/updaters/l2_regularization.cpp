#include "strom/compute/updaters/l2_regularization.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace strom::compute {

void add_l2(std::span<const float> parameters, std::span<float> gradients,
            std::span<const float_range> ranges, float coefficient) {
  if (parameters.size() != gradients.size())
    throw std::invalid_argument(fmt::format("add_l2: {} parameters but {} gradients",
                                            parameters.size(), gradients.size()));
  for (const float_range& range : ranges)
    if (range.begin > range.end || range.end > parameters.size())
      throw std::invalid_argument(fmt::format("add_l2: range [{}, {}) does not fit {} parameters",
                                              range.begin, range.end, parameters.size()));
  if (coefficient == 0.0f)
    return;
  for (const float_range& range : ranges) {
    const float* w = parameters.data();
    float* g = gradients.data();
    for (std::size_t i = range.begin; i < range.end; ++i)
      g[i] += coefficient * w[i];
  }
}

} // namespace strom::compute
