#pragma once
// A job's checkpoint keeper: on the scheduler's node beside the job_master, when the
// scheduler keeps its state (--state-dir) or the job goes on from a checkpoint (--resume).
// It takes a checkpoint by asking a node for its first trainer's snapshot (the chunks a
// joining node receives), assembles it and saves it through the scheduler's store; and it
// serves its latest checkpoint to nodes the same way a live trainer serves a joining node, so
// a resumed job restores every node through the node agents' ordinary restore. An actor of
// its own: the chunks of a large model must not queue behind, or ahead of, the job_master's
// progress messages.

#include <cstdint>
#include <memory>
#include <optional>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/cluster/scheduler_store.hpp"
#include "strom/actors/worker/snapshot_transfer.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

/// What a checkpoint keeper starts from.
struct checkpoint_keeper_setup {
  std::uint64_t job_id = 0;
  std::shared_ptr<scheduler_store> store;  ///< null: it takes no checkpoints, only serves one
  /// Time a node may take to send its snapshot.
  caf::timespan snapshot_timeout = std::chrono::minutes(2);
  std::optional<compute::frame> latest;  ///< the checkpoint to serve first (a resumed job)
};

/// A checkpoint keeper's state.
struct checkpoint_keeper_state {
  std::optional<compute::frame> latest;     ///< the encoded snapshot saved last
  std::optional<snapshot_receipt> taking;   ///< a checkpoint being taken
  std::uint32_t served = 0;                 ///< snapshots sent, for their ids

  static inline const char* name = "strom.checkpoint_keeper";
};

/// Handles: (checkpoint_atom, job_id, agent) -> snapshot_sent once the node agent's snapshot
/// arrived whole and was saved (snapshot_failed or state_failed errors say why not, also at
/// once when the agent's node goes away meanwhile);
/// snapshot_chunk (of the checkpoint being taken); (snapshot_atom, job_id, receiver) ->
/// snapshot_sent: the latest checkpoint as chunks to `receiver` (snapshot_failed without one).
caf::behavior checkpoint_keeper(caf::stateful_actor<checkpoint_keeper_state>* self,
                                checkpoint_keeper_setup setup);

} // namespace strom::actors
