#pragma once
// A testing aid for heterogeneous clusters on one machine (strom node --speed-factor F,
// strom train --node-speeds F1,F2,...): a node of speed factor F computes F times as fast as
// it could by waiting (1/F - 1) times each computation's duration after it. Waiting, not
// spinning, so the slowed node leaves the cores to the others as a slower machine would.
// Factors above 1 cannot be made by waiting and are refused where the flags are read.

#include <caf/timespan.hpp>

namespace strom::actors {

/// The speed factor of a node that is not slowed.
inline constexpr double full_speed = 1.0;

/// How long a node of `speed_factor` (in (0, 1]) waits after a computation that took
/// `computed`: (1/F - 1) times it; nothing at full speed.
caf::timespan slowdown_wait(double speed_factor, caf::timespan computed);

} // namespace strom::actors
