#pragma once
// The subnet's steps shared by the files that make it up: subnet.cpp (forward, backward,
// epochs, evaluation, restores) and subnet_snapshots.cpp (taking, copying, sending and going
// back to the stage's snapshots). Internal to those files.

#include <cstdint>
#include <span>

#include <capnp/common.h>
#include <caf/all.hpp>

#include "strom/actors/pipeline/subnet.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors::subnet_steps {

using self_ptr = caf::stateful_actor<subnet_state>*;

/// Sends encoded snapshot `encoded` to `receiver` as the chunks of snapshot `id`; how many.
result<std::uint32_t> send_chunks(caf::event_based_actor* self, const caf::actor& receiver,
                                  std::span<const capnp::word> encoded, std::uint64_t id);

/// Sends a copy of the stage's own snapshot `kept` to its holder, in the background.
void send_copy(self_ptr self, const subnet_setup& setup, const own_stage_snapshot& kept);

/// The stage's state as it is now, `epoch_step` minibatches into its epoch; a stage with copies
/// keeps its residual too: it is update not yet sent to them.
compute::replica_snapshot state_now(self_ptr self, const subnet_setup& setup,
                                    std::uint64_t epoch_step);

/// The stage's snapshot at `at`: kept for a rollback, and a copy sent (chunks, then the note)
/// to the stage's holder, which tells the job_master once it holds it whole. Only the copy of
/// the parameters and updater state is taken here; encoding and sending it is not.
void take_snapshot(self_ptr self, const subnet_setup& setup, const stage_point& at);

/// Sends `encoded` (a copy held for a neighbour, the stage's state, the network kept for the
/// keeper) to `receiver` as chunks of snapshot `id`; the answer for the requester.
caf::result<snapshot_sent> send_snapshot(self_ptr self, const caf::actor& receiver,
                                         std::span<const capnp::word> encoded, std::uint64_t id);

/// Calls `then` with snapshot `id` of `source` once all its chunks are in (they may come after
/// the note or answer that names it); with an error after the snapshot timeout.
void await_snapshot(self_ptr self, const subnet_setup& setup, const caf::actor_addr& source,
                    std::uint64_t id, stage_snapshots::snapshot_waiter then);

/// The stage's state as it was at `to`: `saved` in its replica, nothing in flight, the last
/// stage's figures of the epoch as they were.
caf::error go_back(self_ptr self, const subnet_setup& setup, const stage_snapshot_note& to,
                   const compute::replica_snapshot& saved);

/// The state training starts from, once, for a restore to go back to.
void first_snapshot(self_ptr self, const subnet_setup& setup);

} // namespace strom::actors::subnet_steps
