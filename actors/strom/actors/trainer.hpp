#pragma once
// The trainer: one data-parallel replica in one worker slot. Each step it computes an update
// on its next batch and sends a copy to the node's accumulator; it never applies its own
// update. What it applies are the frames the relay hands it (the node's encoded sums), so all
// replicas of a node stay identical. Frames and steps share one mailbox: frames that arrive
// during a step are applied before the next one, without locks. Spawn it detached: a step
// is long and must not block CAF's scheduler threads.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/seen_updates.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/replica.hpp"

namespace strom::actors {

/// What a trainer is built from.
struct trainer_setup {
  std::uint32_t worker = 0;                       ///< slot on the node
  std::shared_ptr<compute::replica> replica;      ///< read by others only between epochs
  std::shared_ptr<const compute::dataset> train;  ///< the node's training set
  compute::index_range share;                     ///< this worker's partition of `train`
  std::uint64_t seed = 0;                         ///< the job seed (epoch order)
  bool shuffle = true;                            ///< reshuffle the share every epoch
  std::size_t batch_size = 1;
  caf::actor accumulator;  ///< receives worker_update and finished_atom
  caf::actor supervisor;   ///< receives step_report, epoch_report and drain_report
};

/// A trainer's state.
struct trainer_state {
  std::unique_ptr<compute::batch_loader> loader;  ///< created by the first start
  /// Update buffers handed to the accumulator; one whose only owner is this pool is free.
  std::vector<std::shared_ptr<std::vector<float>>> pool;
  compute::frame_workspace workspace;
  seen_updates applied;  ///< keys of the frames applied, to catch duplicates
  std::uint32_t epoch = 0;
  double loss_sum = 0.0;
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint64_t updates_applied = 0;
  std::uint64_t duplicate_updates_applied = 0;
  std::uint64_t frames_rejected = 0;

  static inline const char* name = "strom.trainer";
};

/// Handles: (start_atom, epoch) starts an epoch over the share; step_atom runs one step and
/// queues the next (after the partition: finished_atom to the accumulator and epoch_report
/// to the supervisor); shared_frame is applied to the replica; drain_marker answers the
/// supervisor with a drain_report. An exception in a step ends the actor with its message.
caf::behavior trainer(caf::stateful_actor<trainer_state>* self, trainer_setup setup);

} // namespace strom::actors
