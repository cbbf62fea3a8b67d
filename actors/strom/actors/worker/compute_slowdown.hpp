#pragma once
// A testing aid for heterogeneous clusters on one machine (strom node --speed-factor F,
// strom train --node-speeds F1,F2,...): a node of speed factor F computes F times as fast as
// it could by waiting (1/F - 1) times each computation's duration after it. Waiting, not
// spinning, so the slowed node leaves the cores to the others as a slower machine would.
// Factors above 1 cannot be made by waiting and are refused where the flags are read.

#include <cstdint>
#include <optional>

#include <caf/timespan.hpp>

namespace strom::actors {

/// The speed factor of a node that is not slowed.
inline constexpr double full_speed = 1.0;

/// A node that slows down (or speeds up) mid-run, as a machine that another workload starts
/// or stops sharing: the factor it computes at from 0-based epoch `epoch` on (strom node
/// --speed-drift, strom train --speed-drift), to test re-partitioning on one machine.
struct speed_drift {
  double factor = full_speed;
  std::uint32_t epoch = 0;
};

/// A node's speed factor over a job's epochs.
struct node_speed {
  double factor = full_speed;
  std::optional<speed_drift> drift{};

  /// The factor during 0-based epoch `epoch`.
  double at(std::uint32_t epoch) const noexcept {
    return drift && epoch >= drift->epoch ? drift->factor : factor;
  }
};

/// How long a node of `speed_factor` (in (0, 1]) waits after a computation that took
/// `computed`: (1/F - 1) times it; nothing at full speed.
caf::timespan slowdown_wait(double speed_factor, caf::timespan computed);

} // namespace strom::actors
