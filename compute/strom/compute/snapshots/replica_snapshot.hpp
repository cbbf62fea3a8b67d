#pragma once
// A trainer's replica state, as a live peer hands it to a node that joins a running job
// (issue 17, "Restore"): what a checkpoint holds (parameters, updater state, layer state such
// as batch-norm running statistics) plus what only a running worker has: its sharing residual
// and encoder progress, and how far each origin's frames got, so that frames newer than the
// snapshot can be told apart later. No CAF here: the trainer actor fills it between steps.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// How far one origin's frames got in what the replica holds (the trainer's origin_progress).
struct origin_clock {
  std::uint64_t origin = 0;
  std::uint32_t clock_epoch = 0;  ///< epoch of `clock`
  std::uint64_t clock = 0;        ///< updates of the origin's slowest worker applied
  std::uint32_t drained = 0;      ///< epochs whose drain marker arrived
};

/// Where training stood when the snapshot was taken.
struct snapshot_progress {
  std::uint32_t epoch = 0;             ///< epochs the replica completed
  std::uint64_t iteration = 0;         ///< updater steps taken
  std::uint64_t batches_in_epoch = 0;  ///< steps of the current epoch already taken
  std::uint64_t samples_in_epoch = 0;
  std::vector<origin_clock> origins;
};

/// The worker's gradient-sharing state.
struct sharing_snapshot {
  std::vector<float> residual;          ///< what was added in but not yet sent
  threshold_encoder_progress encoder;   ///< threshold, counters
};

/// One replica's full state.
struct replica_snapshot {
  std::vector<float> parameters;
  std::vector<float> updater_state;
  std::vector<float> layer_state;
  std::optional<sharing_snapshot> sharing;  ///< empty when the worker does not share
  snapshot_progress progress;
};

/// Copies `source`'s buffers, `encoder`'s state (when not null) and `progress`.
replica_snapshot take_snapshot(const replica& source, const threshold_encoder* encoder,
                               snapshot_progress progress);

/// Copies a snapshot into `target` (and `encoder`, which must be given exactly when the
/// snapshot carries sharing state). Every section's element count is checked against the
/// target before anything is copied: a refused snapshot leaves target and encoder as they were.
result<void> apply_snapshot(const replica_snapshot& saved, replica& target,
                            threshold_encoder* encoder);

} // namespace strom::compute
