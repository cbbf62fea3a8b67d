#include "strom/actors/worker/trainer_snapshot.hpp"

#include <algorithm>
#include <chrono>

#include "strom/actors/errors.hpp"
#include "strom/actors/worker/snapshot_transfer.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"

namespace strom::actors {

namespace {

/// Snapshot ids: the node id in the high 32 bits, the worker slot in the next 16 and the
/// trainer's snapshot count in the low 16, so that two trainers never send the same id.
constexpr unsigned snapshot_node_shift = 32;
constexpr unsigned snapshot_worker_shift = 16;
constexpr std::uint64_t snapshot_count_mask = 0xffff;

} // namespace

compute::replica_snapshot snapshot_of(const trainer_state& state, const trainer_setup& setup) {
  compute::snapshot_progress progress;
  progress.epoch = setup.replica->epoch();
  progress.iteration = setup.replica->iteration();
  progress.batches_in_epoch = state.batches;
  progress.samples_in_epoch = state.samples;
  for (const auto& origin : state.origins)
    progress.origins.push_back({origin.origin, origin.clock_epoch, origin.clock, origin.drained});
  return compute::take_snapshot(*setup.replica, state.encoder ? &*state.encoder : nullptr,
                                std::move(progress));
}

caf::result<snapshot_sent> send_snapshot(caf::stateful_actor<trainer_state>* self,
                                         const trainer_setup& setup, const caf::actor& receiver) {
  auto& st = self->state;
  const std::uint64_t id = (setup.framer->node_id() << snapshot_node_shift) |
                           (std::uint64_t{setup.worker} << snapshot_worker_shift) |
                           (st.snapshots_sent & snapshot_count_mask);
  const auto encoded = compute::encode_snapshot(snapshot_of(st, setup));
  auto sent = send_in_chunks(receiver, {encoded.begin(), encoded.size()}, id,
                             "trainer " + std::to_string(setup.worker));
  ++st.snapshots_sent;
  return sent;
}

caf::error restore_from(trainer_state& state, const trainer_setup& setup,
                        const assembled_snapshot& snapshot) {
  auto saved = compute::decode_snapshot(snapshot.value.words());
  const auto refused = [&](const std::string& why) {
    return make_error(strom_error::snapshot_failed,
                      "trainer " + std::to_string(setup.worker) + ": snapshot refused: " + why);
  };
  if (!saved)
    return refused(saved.err().message);
  // A checkpoint's snapshot (--resume) carries only the model: a worker that shares starts
  // its sharing afresh, and one that does not (the job's mode changed) has none to take.
  if (!state.encoder)
    saved->sharing.reset();
  if (saved->sharing) {
    // A source that applies its own updates at once holds the others' view plus its unsent
    // residual (trainer.hpp); that residual reaches everyone later as its frames, so the
    // receiver takes the others' view and starts with nothing unsent of its own.
    auto& residual = saved->sharing->residual;
    if (setup.apply_own_update && residual.size() == saved->parameters.size())
      for (std::size_t i = 0; i < residual.size(); ++i)
        saved->parameters[i] -= residual[i];
    std::fill(residual.begin(), residual.end(), 0.0f);
  }
  if (auto ok = compute::apply_snapshot(*saved, *setup.replica,
                                        saved->sharing ? &*state.encoder : nullptr);
      !ok)
    return refused(ok.err().message);
  return caf::none;
}

} // namespace strom::actors
