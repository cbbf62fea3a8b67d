#pragma once
// The selection pass of the calibrated encoding (calibrated_blocks.hpp): which elements of a
// tensor's residual reach its threshold, how much they hold and how much the whole tensor
// holds, in one read of the residual. The sums are kept in float lanes and gathered into a
// double every few hundred elements: one double added per element made this pass a quarter
// of a 2-worker training step (perf, fashion_mlp without a distributed section).

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute {

/// What a selection found.
struct magnitude_selection {
  /// Elements whose magnitude reached the threshold; indices.size() + 1 when more did (the
  /// pass stops there and the masses are not complete).
  std::size_t hits = 0;
  double selected_mass = 0.0;  ///< sum of their magnitudes
  double total_mass = 0.0;     ///< sum of every element's magnitude (NaN counts 0, inf max)
};

/// Lists the elements of `values` whose magnitude reaches `threshold` (> 0) into `indices`
/// (1-based, negative where the value is): an AVX-512 kernel where the CPU has one.
magnitude_selection magnitude_select(std::span<const float> values, float threshold,
                                     std::span<std::int32_t> indices);

/// magnitude_select without the AVX-512 kernel (what other CPUs run; tests compare the two).
magnitude_selection magnitude_select_portable(std::span<const float> values, float threshold,
                                              std::span<std::int32_t> indices);

} // namespace strom::compute
