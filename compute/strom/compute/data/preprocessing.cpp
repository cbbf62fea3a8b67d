#include "strom/compute/data/preprocessing.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace strom::compute {

void scale(dataset& data, float factor) {
  for (float& x : data.features)
    x *= factor;
}

namespace {

// Both fits use two passes (mean, then squared deviations), accumulated in double, which
// stays accurate where the one-pass E[x^2] - E[x]^2 cancels catastrophically.

standardization fit_global(const dataset& data) {
  const std::size_t n = data.features.size();
  if (n == 0)
    return {{0.0f}, {1.0f}};
  double sum = 0;
  for (float x : data.features)
    sum += x;
  const double mean = sum / static_cast<double>(n);
  double squares = 0;
  for (float x : data.features)
    squares += (x - mean) * (x - mean);
  return {{static_cast<float>(mean)},
          {static_cast<float>(std::sqrt(squares / static_cast<double>(n)))}};
}

standardization fit_per_feature(const dataset& data) {
  const std::size_t features = data.sample_shape.size();
  const std::size_t samples = data.size();
  standardization stats{std::vector<float>(features, 0.0f), std::vector<float>(features, 1.0f)};
  if (samples == 0)
    return stats;
  std::vector<double> sums(features, 0.0);
  for (std::size_t s = 0; s < samples; ++s) {
    const float* row = data.features.data() + s * features;
    for (std::size_t f = 0; f < features; ++f)
      sums[f] += row[f];
  }
  for (double& sum : sums)
    sum /= static_cast<double>(samples);
  std::vector<double> squares(features, 0.0);
  for (std::size_t s = 0; s < samples; ++s) {
    const float* row = data.features.data() + s * features;
    for (std::size_t f = 0; f < features; ++f)
      squares[f] += (row[f] - sums[f]) * (row[f] - sums[f]);
  }
  for (std::size_t f = 0; f < features; ++f) {
    stats.mean[f] = static_cast<float>(sums[f]);
    stats.stddev[f] = static_cast<float>(std::sqrt(squares[f] / static_cast<double>(samples)));
  }
  return stats;
}

} // namespace

standardization fit_standardization(const dataset& data, standardize_kind kind) {
  switch (kind) {
    case standardize_kind::global: return fit_global(data);
    case standardize_kind::per_feature: return fit_per_feature(data);
    case standardize_kind::none: break;
  }
  return {};
}

void apply(dataset& data, const standardization& stats) {
  const std::size_t count = stats.mean.size();
  const std::size_t features = data.sample_shape.size();
  if (stats.stddev.size() != count || (count > 1 && count != features))
    throw std::invalid_argument(fmt::format(
      "standardization has {} means and {} deviations for samples of {} features", count,
      stats.stddev.size(), features));
  if (count == 0)
    return;
  // Multiplying by a reciprocal computed once per feature keeps the division off the loop.
  std::vector<float> inverse(count);
  for (std::size_t i = 0; i < count; ++i)
    inverse[i] = stats.stddev[i] == 0.0f ? 1.0f : 1.0f / stats.stddev[i];
  if (count == 1) {
    const float mean = stats.mean[0];
    const float factor = inverse[0];
    for (float& x : data.features)
      x = (x - mean) * factor;
    return;
  }
  for (std::size_t s = 0; s < data.size(); ++s) {
    float* row = data.features.data() + s * features;
    for (std::size_t f = 0; f < features; ++f)
      row[f] = (row[f] - stats.mean[f]) * inverse[f];
  }
}

} // namespace strom::compute
