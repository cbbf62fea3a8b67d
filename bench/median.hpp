#pragma once
// The median the benchmarks summarise repeated runs with: robust against the one run a shared
// machine slowed down.

#include <algorithm>
#include <vector>

namespace strom::bench {

inline double median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

} // namespace strom::bench
