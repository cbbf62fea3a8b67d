// The subnet's snapshots (subnet.hpp): its state taken between steps and kept for a rollback,
// copies encoded and sent to the stage's holder in the background, a neighbour's copy sent on
// for a restore, and going back to a snapshot.

#include "strom/actors/pipeline/subnet_steps.hpp"

#include <utility>

#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/log.hpp"

namespace strom::actors {

using subnet_steps::self_ptr;
using subnet_steps::send_chunks;
using subnet_steps::send_copy;
using subnet_steps::state_now;

result<std::uint32_t> subnet_steps::send_chunks(caf::event_based_actor* self,
                                                const caf::actor& receiver,
                                                std::span<const capnp::word> encoded,
                                                std::uint64_t id) {
  auto chunks = compute::chunk_snapshot(encoded, id);
  if (!chunks)
    return chunks.err();
  for (auto& chunk : *chunks)
    self->send(receiver, snapshot_chunk{std::move(chunk)});
  return static_cast<std::uint32_t>(chunks->size());
}

namespace {

/// A copy of a stage's snapshot `note` describes, `saved`, encoded and sent to its holder in
/// the background while the stage trains on: the chunks, then the note, which the holder
/// passes to the job_master once it holds the copy whole. One actor a copy; it ends once the
/// copy is out.
caf::behavior copy_sender(caf::event_based_actor* self,
                          std::shared_ptr<const compute::replica_snapshot> saved,
                          stage_snapshot_note note, caf::actor holder, std::uint64_t job_id) {
  const auto encoded = compute::encode_snapshot(*saved);
  if (auto sent = send_chunks(self, holder, {encoded.begin(), encoded.size()}, note.snapshot_id);
      sent)
    self->send(holder, note);
  else  // the holder never confirms it: a restore goes back further
    log::warning("pipeline stage {} of job {}: snapshot not sent: {}", note.stage + 1, job_id,
                 sent.err().message);
  self->quit();
  return {};
}

/// The stage's slot among every copy's stages (copy r's stage s is r * stages + s): what its
/// snapshots' notes name.
std::uint32_t slot_of(const subnet_setup& setup) {
  return setup.pipeline * setup.stages + setup.stage;
}

} // namespace

void subnet_steps::send_copy(self_ptr self, const subnet_setup& setup,
                             const own_stage_snapshot& kept) {
  const auto& links = self->state.links;
  const auto& holder = setup.stage + 1 < setup.stages ? links.downstream : links.upstream;
  self->spawn(copy_sender, kept.saved, kept.note, holder, setup.job_id);
}

compute::replica_snapshot subnet_steps::state_now(self_ptr self, const subnet_setup& setup,
                                                  std::uint64_t epoch_step) {
  auto& st = self->state;
  const auto& core = setup.replica->core();
  compute::snapshot_progress progress;
  progress.epoch = core.epoch();
  progress.iteration = core.iteration();
  progress.batches_in_epoch = epoch_step;
  return compute::take_snapshot(core, st.encoder ? &*st.encoder : nullptr, std::move(progress));
}

void subnet_steps::take_snapshot(self_ptr self, const subnet_setup& setup, const stage_point& at) {
  auto& st = self->state;
  stage_snapshot_note note{slot_of(setup), at, st.step, ++st.snapshots_taken,
                           st.totals.steps, st.totals.samples, st.totals.loss_sum};
  own_stage_snapshot kept{note, std::make_shared<const compute::replica_snapshot>(
                                  state_now(self, setup, at.epoch_step))};
  send_copy(self, setup, kept);
  st.snapshots.keep_own(std::move(kept));
}

caf::result<snapshot_sent> subnet_steps::send_snapshot(self_ptr self, const caf::actor& receiver,
                                                       std::span<const capnp::word> encoded,
                                                       std::uint64_t id) {
  auto sent = send_chunks(self, receiver, encoded, id);
  if (!sent)
    return make_error(strom_error::snapshot_failed, sent.err().message);
  return snapshot_sent{id, *sent, encoded.size() * sizeof(capnp::word)};
}

void subnet_steps::await_snapshot(self_ptr self, const subnet_setup& setup,
                                  const caf::actor_addr& source, std::uint64_t id,
                                  stage_snapshots::snapshot_waiter then) {
  if (self->state.snapshots.when_whole(source, id, std::move(then)))
    self->delayed_send(self, setup.snapshot_timeout, caf::timeout_atom_v, snapshot_atom_v, source,
                       id);
}

caf::error subnet_steps::go_back(self_ptr self, const subnet_setup& setup,
                                 const stage_snapshot_note& to,
                                 const compute::replica_snapshot& saved) {
  auto& st = self->state;
  if (auto ok = compute::apply_snapshot(saved, setup.replica->core(),
                                        st.encoder ? &*st.encoder : nullptr);
      !ok)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("pipeline stage {} of job {}: snapshot refused: {}",
                                  setup.stage + 1, setup.job_id, ok.err().message));
  setup.replica->discard_gradient();
  // Every copy went back to the same point, where each had sent that many updates; the
  // updates that arrived since (of an older generation) are dropped with the buffer.
  std::fill(st.incoming.begin(), st.incoming.end(), 0.0f);
  for (auto& copy : st.copies)
    copy = {to.at.epoch, to.at.epoch_step};
  st.waiting_for_copies = false;
  st.step = to.step;
  st.epoch = to.at.epoch;
  st.epoch_step = st.next_epoch_step = to.at.epoch_step;
  st.step_micro = st.step_done = st.forwarded = 0;
  st.minibatch = nullptr;
  st.step_loss = 0.0;
  st.totals = {};
  st.totals.steps = to.steps;
  st.totals.samples = to.samples;
  st.totals.loss_sum = to.loss_sum;
  return caf::none;
}

void subnet_steps::first_snapshot(self_ptr self, const subnet_setup& setup) {
  auto& st = self->state;
  // A restored or refilled subnet keeps the state it was given; one spawned before the first
  // epoch (again, after a loss) has none yet. A resumed job starts past epoch 0.
  if (setup.snapshot_every > 0 && !st.snapshots.keeps_own())
    take_snapshot(self, setup, {st.epoch, 0});
}

} // namespace strom::actors
