// The trainer in parameter-averaging mode (trainer.hpp, parameter_averaging.hpp): the worker
// trains alone, frames an empty update each step (its clock), adds its contribution to its
// node's sum at every averaging step and, before its next step, continues from the average.

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "strom/actors/worker/trainer_steps.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/log.hpp"

namespace strom::actors::trainer_steps {

namespace {

averaging_worker_state& averaging_of(trainer_state& st) {
  return std::get<averaging_worker_state>(st.mode);
}

/// Hands the node's complete sum of average `key` to the relay in segments, to be reduced
/// along the tree with the other nodes' (average_reduction.hpp).
void publish_sum(self_ptr self, const trainer_setup& setup, const average_key& key) {
  auto& st = self->state;
  std::vector<std::uint64_t> members;
  for (const auto& entry : st.origins)
    if (entry.member)
      members.push_back(entry.origin);
  const auto sum = setup.node_sums->sum(key);
  for (std::size_t offset = 0; offset < sum.size(); offset += average_segment_elements) {
    const compute::frame_header header{setup.framer->node_id(), setup.worker, key.index, 0,
                                       key.round, offset};
    const auto segment =
      sum.subspan(offset, std::min(average_segment_elements, sum.size() - offset));
    auto built = compute::build_update_frame(header, compute::dense_fp32_update(segment), {});
    if (!built)  // a segment is 1 MiB
      throw std::logic_error("trainer: its node's sum could not be framed: " + built.err().message);
    self->send(setup.relay, publish_atom_v,
               average_part{key.round, key.index, 0, members, shared_frame{std::move(*built)}});
  }
}

} // namespace

void start_averaging(self_ptr self, const trainer_setup& setup) {
  auto& replica = *setup.replica;
  self->state.mode.emplace<averaging_worker_state>(averaging_worker_state{
    averaging_totals{contribution_elements(replica.net().parameters().size(),
                                           replica.updater_state().size(), setup.averaging)},
    std::nullopt, 0});
}

void begin_averaging_round(self_ptr self, const round_work& work) {
  auto* averaging = std::get_if<averaging_worker_state>(&self->state.mode);
  if (!averaging)
    return;
  averaging->totals.start_round(work.round);
  averaging->common_steps = work.common_steps;
  averaging->awaiting.reset();
}

/// With other nodes in the round, the total came from the relay; alone, every worker of this
/// node added its own.
bool average_ready(const trainer_state& st, const trainer_setup& setup) {
  const auto* averaging = std::get_if<averaging_worker_state>(&st.mode);
  return !averaging || !averaging->awaiting
         || (st.other_nodes ? averaging->totals.complete(*averaging->awaiting)
                            : setup.node_sums->complete({st.epoch, *averaging->awaiting}));
}

void take_average(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  auto* averaging = std::get_if<averaging_worker_state>(&st.mode);
  if (!averaging || !averaging->awaiting)
    return;
  const auto parameters = setup.replica->net().parameters();
  const auto updater_state =
    setup.averaging.updaters ? setup.replica->updater_state() : std::span<float>{};
  if (average_ready(st, setup)) {
    if (st.other_nodes)
      averaging->totals.take(*averaging->awaiting, parameters, updater_state);
    else
      take_average_of(std::as_bytes(setup.node_sums->sum({st.epoch, *averaging->awaiting})),
                      parameters, updater_state);
  }
  averaging->awaiting.reset();
}

/// The empty update it frames also tells its siblings at an averaging step that it added its
/// contribution to its node's sum; the node's last worker to add publishes the sum to the
/// relay when the round has other nodes.
void averaging_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch,
                    step_spans& spans) {
  auto& st = self->state;
  auto& averaging = averaging_of(st);
  auto& replica = *setup.replica;
  const float loss = compute_step(
    self, setup, [&] { return replica.train_step(batch.features, batch.labels, batch.size); });
  spans.mark(timeline_kind::forward_backward);
  if (contributes_at(st.batches + 1, averaging.common_steps, setup.averaging)) {
    const average_key key{st.epoch, averaging.totals.next_index()};
    averaging.awaiting = key.index;
    const bool last = setup.node_sums->add(
      key, replica.net().parameters(),
      setup.averaging.updaters ? replica.updater_state() : std::span<const float>{});
    if (last) {
      setup.framer->count_average();
      if (st.other_nodes)
        publish_sum(self, setup, key);
    }
  }
  auto own = frame_own(st, setup,
                       empty_update(replica.net().parameters().size(), st.encoder->threshold()));
  send_to_others(self, setup, shared_frame{std::move(own.frame)});
  spans.mark(timeline_kind::frame);
  note_applied(self, setup, own.header);
  count_step(self, setup, loss, batch.size);
}

bool take_total(self_ptr self, const trainer_setup& setup, const average_total& total) {
  auto* averaging = std::get_if<averaging_worker_state>(&self->state.mode);
  if (!averaging)
    return false;
  if (auto kept = averaging->totals.add(total); !kept) {
    ++self->state.frames_rejected;
    log::warning("trainer {}: dropped a total: {}", setup.worker, kept.err().message);
    return false;
  }
  return true;
}

} // namespace strom::actors::trainer_steps
