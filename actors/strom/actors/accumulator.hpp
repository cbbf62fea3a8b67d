#pragma once
// The accumulator: one per node. Its workers encode their own updates (see trainer.hpp); it
// puts each one into an UpdateFrame stamped with the node's per-origin sequence number and
// clock, and hands it to the relay. Every update makes a frame, empty (header only) when
// nothing reached the threshold, because the header's `iteration` is the node's clock: how
// many of this epoch's updates of the node's slowest worker (still training) the frames sent
// so far include. Trainers bound their staleness by it. Once every worker finished the epoch
// it sends a drain marker after the last frame.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/frames/update_frame.hpp"

namespace strom::actors {

/// What an accumulator is built from.
struct accumulator_setup {
  std::uint64_t node_id = 0;    ///< origin of this node's frames
  std::uint32_t workers = 1;    ///< local trainers, slots 0 .. workers-1
  std::size_t elements = 0;     ///< parameters of the model
  compute::frame_options frames;  ///< frame builder choices
  caf::actor relay;             ///< where frames go
};

/// An accumulator's state.
struct accumulator_state {
  std::vector<char> finished;      ///< per worker: done with this epoch's partition
  std::vector<std::uint64_t> included;  ///< per worker: its updates in this epoch's frames
  std::uint64_t next_sequence = 0; ///< per-origin sequence of the next frame
  accumulator_stats stats;

  static inline const char* name = "strom.accumulator";
};

/// Handles: worker_update (one frame, possibly empty); (finished_atom, worker, epoch) (a
/// worker's partition is done; once all are, sends a drain_marker to the relay); stats_atom
/// -> accumulator_stats. Quits with an error on a malformed update (wrong worker slot, size,
/// encoding or payload) or a frame that cannot be built.
caf::behavior accumulator(caf::stateful_actor<accumulator_state>* self, accumulator_setup setup);

} // namespace strom::actors
