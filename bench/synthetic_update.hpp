#pragma once
// What the codec benchmarks share: a gradient-like update of a chosen density and a
// best-of-N timer.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "strom/compute/random.hpp"

namespace strom::bench {

/// Background values far below any benchmark threshold, so that repeated encodings of the
/// same update stay at the chosen density.
constexpr float background = 1e-7f;
constexpr std::uint64_t update_seed = 42;

/// `density` of the elements at +/-1 (above the threshold), the rest +/-background.
inline std::vector<float> make_update(std::size_t n, double density) {
  compute::rng random(update_seed);
  std::vector<float> update(n);
  for (float& u : update) {
    const bool hit = random.uniform() < density;
    const bool negative = (random.next() & 1u) != 0;
    const float magnitude = hit ? 1.0f : background;
    u = negative ? -magnitude : magnitude;
  }
  return update;
}

/// The best time of `reps` runs of `body`: the least disturbed run on a shared machine.
template <class Body>
double best_seconds(std::size_t reps, Body body) {
  using clock = std::chrono::steady_clock;
  double best = 1e30;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto start = clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(clock::now() - start).count());
  }
  return best;
}

} // namespace strom::bench
