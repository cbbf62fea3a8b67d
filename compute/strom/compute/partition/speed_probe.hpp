#pragma once
// A node's measured compute rate, for the speed-aware partition (issue #20: each node reports
// its speed from "a short compute benchmark when it joins"). compute/ reads no clock: the
// caller passes one.

#include <cstdint>
#include <functional>

namespace strom::compute {

/// Rounds timed after the untimed warm-up one; the fastest counts (a shared machine's
/// scheduling only ever slows a round down). About 30 ms on one core.
inline constexpr std::uint32_t default_probe_rounds = 10;

/// Floating-point operations a second of a reference layer's forward and backward: a dense
/// layer from 784 inputs to 256 units on a batch of 64 (the shape of the example MLP's first
/// layer, where a pipeline's time goes), the fastest of `rounds` after a warm-up. Throws
/// std::invalid_argument without a clock or rounds.
double measure_compute_rate(const std::function<double()>& seconds_now,
                            std::uint32_t rounds = default_probe_rounds);

} // namespace strom::compute
