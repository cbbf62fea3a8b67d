#pragma once
// Adam's scan_step on AVX-512F, chosen at run time so that the build stays baseline x86-64.
// Adam's arithmetic waits on the divider and the threshold scan on memory, so computing each
// update inside the scan's pass hides much of the scan, and the update is never stored.
// Bit-identical to adam_updater::compute_update followed by threshold_scan.

#include <cstddef>
#include <optional>
#include <span>

#include "strom/compute/codecs/threshold_codec.hpp"

namespace strom::compute {

/// Adam's values of one step (see adam_updater).
struct adam_step_constants {
  float beta1 = 0.0f;
  float beta2 = 0.0f;
  float epsilon = 0.0f;
  float step_size = 0.0f;          ///< learning rate / (1 - beta1^t)
  float second_correction = 0.0f;  ///< 1 / (1 - beta2^t)
};

/// Advances Adam's moments `first` and `second` by `gradient` (all as long as scan.residual)
/// and hands each update to threshold_scan's pass over `scan`; returns the scan's count, or
/// nullopt (touching nothing) when this CPU has no AVX-512F or this is not an x86-64 build.
std::optional<std::size_t> adam_scan_avx512(std::span<const float> gradient,
                                            std::span<float> first, std::span<float> second,
                                            const adam_step_constants& constants,
                                            const threshold_scan_args& scan);

} // namespace strom::compute
