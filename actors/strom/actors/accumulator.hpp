#pragma once
// The accumulator: one per node. It sums the node's workers' updates into the node's one
// encoder's residual and, once every worker still training this epoch has contributed (a
// round), threshold-encodes what reached the threshold, wraps it in an UpdateFrame and hands it to
// the relay. Workers never wait for a round: a fast worker's second update closes the round
// early, so a frame holds at most one update per worker. Every round sends a frame, empty
// (header only) when nothing reached the threshold, and its header's `iteration` is the
// node's clock: how many of this epoch's updates of the node's slowest worker (still
// training) the frames sent so far include. Trainers bound their staleness by it: a fast
// worker that closes rounds on its own does not move the clock. The frame carries the parameter change to ADD (the negated update),
// so receivers decode straight into their parameters.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/codecs/threshold_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"

namespace strom::actors {

/// What an accumulator is built from.
struct accumulator_setup {
  std::uint64_t node_id = 0;    ///< origin of this node's frames
  std::uint32_t workers = 1;    ///< local trainers, slots 0 .. workers-1
  std::size_t elements = 0;     ///< parameters of the model
  compute::threshold_encoder_options encoding;  ///< the node's encoder settings
  compute::frame_options frames;                ///< frame builder choices
  caf::actor relay;             ///< where frames go
};

/// An accumulator's state.
struct accumulator_state {
  /// Set when the actor starts; its residual takes each update as it comes (negated), so a
  /// round's sum needs no buffer of its own.
  std::optional<compute::threshold_encoder> encoder;
  std::vector<char> contributed;   ///< per worker: sent an update this round
  std::uint32_t contributions = 0; ///< updates in this round
  std::vector<char> finished;      ///< per worker: done with this epoch's partition
  std::vector<std::uint64_t> included;  ///< per worker: its updates in this epoch's sent rounds
  std::uint64_t next_sequence = 0; ///< per-origin sequence of the next frame
  std::uint32_t epoch = 0;         ///< epoch of the latest update
  accumulator_stats stats;

  static inline const char* name = "strom.accumulator";
};

/// Handles: worker_update (sum; encode and send a frame, possibly empty, when the round is
/// complete);
/// (finished_atom, worker, epoch) (a worker's partition is done; once all are, flushes the
/// round and sends a drain_marker to the relay); stats_atom -> accumulator_stats. Quits with
/// an error on a malformed update (wrong worker slot or length) or a frame that cannot be
/// built.
caf::behavior accumulator(caf::stateful_actor<accumulator_state>* self, accumulator_setup setup);

} // namespace strom::actors
