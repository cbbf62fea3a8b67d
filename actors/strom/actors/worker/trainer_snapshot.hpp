#pragma once
// A trainer's answer to (snapshot_atom, receiver): between two steps, in the trainer's own
// handler (so nothing reads the replica from another thread), it takes its replica's state,
// sharing residual and progress (compute/snapshots/replica_snapshot.hpp), encodes it once
// and sends it to `receiver` as snapshot_chunk messages of at most
// compute::max_snapshot_chunk_bytes each (why bounded: snapshot_chunks.hpp); and the receiving
// side, a trainer of a node that joins a running job, once its node agent assembled the
// chunks. Kept out of
// trainer.cpp: the step, frame and apply paths there are measured for speed.

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/worker/trainer.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"

namespace strom::actors {

/// The trainer's progress and replica as a snapshot (the part that reads its state).
compute::replica_snapshot snapshot_of(const trainer_state& state, const trainer_setup& setup);

/// Sends the trainer's snapshot to `receiver` in chunks; snapshot_sent says what went out, a
/// strom_error::snapshot_failed error why nothing did.
caf::result<snapshot_sent> send_snapshot(caf::stateful_actor<trainer_state>* self,
                                         const trainer_setup& setup, const caf::actor& receiver);

/// Takes an assembled snapshot's parameters (less the source's unsent residual, which its
/// frames bring later), updater state and progress, with an empty residual (trainer.hpp,
/// restore_atom); one without sharing state (a checkpoint's) leaves the worker's sharing as
/// it was. A refused snapshot leaves the replica as it was.
caf::error restore_from(trainer_state& state, const trainer_setup& setup,
                        const assembled_snapshot& snapshot);

} // namespace strom::actors
