#include "strom/compute/layers/softmax_cross_entropy.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace strom::compute {

float softmax_cross_entropy(std::span<const float> logits, std::span<const std::int32_t> labels,
                            std::size_t batch, std::size_t classes,
                            std::span<float> logits_gradient) {
  assert(logits.size() >= batch * classes && labels.size() >= batch);
  assert(logits_gradient.empty() || logits_gradient.size() >= batch * classes);
  const bool with_gradient = !logits_gradient.empty();
  const float inv_batch = 1.0f / static_cast<float>(batch);
  double total = 0.0;
  for (std::size_t b = 0; b < batch; ++b) {
    const std::int32_t label = labels[b];
    if (label < 0 || static_cast<std::size_t>(label) >= classes)
      throw std::out_of_range(fmt::format("softmax_cross_entropy: label {} of sample {} is "
                                          "outside [0, {})",
                                          label, b, classes));
    const float* z = logits.data() + b * classes;
    // Subtracting the maximum keeps every exp() at most 1: no overflow for large logits.
    const float top = *std::max_element(z, z + classes);
    float denominator = 0.0f;
    for (std::size_t k = 0; k < classes; ++k)
      denominator += std::exp(z[k] - top);
    const float log_denominator = std::log(denominator);
    total += static_cast<double>(log_denominator - (z[label] - top));
    if (!with_gradient)
      continue;
    float* dz = logits_gradient.data() + b * classes;
    const float scale = inv_batch / denominator;
    for (std::size_t k = 0; k < classes; ++k)
      dz[k] = std::exp(z[k] - top) * scale;
    dz[label] -= inv_batch;
  }
  return batch == 0 ? 0.0f : static_cast<float>(total / static_cast<double>(batch));
}

std::size_t count_correct(std::span<const float> logits, std::span<const std::int32_t> labels,
                          std::size_t batch, std::size_t classes) {
  assert(logits.size() >= batch * classes && labels.size() >= batch);
  std::size_t correct = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* z = logits.data() + b * classes;
    const auto predicted = static_cast<std::int32_t>(std::max_element(z, z + classes) - z);
    correct += predicted == labels[b] ? 1 : 0;
  }
  return correct;
}

} // namespace strom::compute
