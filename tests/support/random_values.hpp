#pragma once
// Seeded uniform test values, shared by the layer tests and the CUDA conformance tests.

#include <cstddef>
#include <vector>

#include "strom/compute/random.hpp"

namespace strom::compute::testing {

/// n floats uniform in [low, high).
inline std::vector<float> random_values(std::size_t n, rng& gen, float low = -1.0f,
                                        float high = 1.0f) {
  std::vector<float> values(n);
  for (auto& v : values)
    v = gen.uniform(low, high);
  return values;
}

} // namespace strom::compute::testing
