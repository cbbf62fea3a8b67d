#include "strom/actors/parameter_shard.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

using shard_ptr = caf::stateful_actor<parameter_shard_state>*;

/// A frame of `values` for the range; the shard's own data always fits a frame.
compute::frame frame_of(const parameter_shard_state& st, const parameter_shard_setup& setup,
                        std::span<const float> values) {
  compute::frame_header header;
  header.iteration = st.iteration;
  header.epoch = st.epoch;
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(values));
  if (!built)
    throw std::logic_error(fmt::format("parameter_shard: key {} part {}: {}", setup.range.key,
                                       setup.range.part, built.err().message));
  return std::move(*built);
}

/// One optimizer step on `gradient` (overwritten with the update); parameters -= update.
void optimize(parameter_shard_state& st, const parameter_shard_setup& setup,
              std::span<float> gradient) {
  const compute::step_context step{st.iteration, st.epoch,
                                   setup.schedule.rate_at(st.iteration, st.epoch)};
  ++st.iteration;
  ++st.stats.updates;
  setup.rule->apply_step(gradient, st.updater_state, step, st.parameters);
}

/// Reads a push's gradient and adds it into `target` (range.count floats).
result<void> add_push(parameter_shard_state& st, const parameter_shard_setup& setup,
                      const kv_push& push, std::span<float> target) {
  auto view = compute::read_update_frame(push.gradient, st.workspace);
  if (!view)
    return view.err();
  if (view->header.offset != 0 || view->elements != setup.range.count)
    return error{fmt::format("a push of elements {}..{} does not cover key {} part {} "
                             "({} elements)",
                             view->header.offset, view->header.offset + view->elements,
                             setup.range.key, setup.range.part, setup.range.count)};
  return compute::apply_update_frame(*view, target);
}

/// Whether `worker` still holds up step `step` of `round`: it neither pushed it, nor
/// finished the round with fewer steps, nor was lost.
bool holds_up(const parameter_shard_state& st, const shard_round& round, const pending_step& at,
              std::uint64_t step, kv_worker worker) {
  if (at.pushed.count(worker) > 0 || st.lost_nodes.count(kv_node_of(worker)) > 0)
    return false;
  const auto done = round.done.find(worker);
  return done == round.done.end() || done->second >= step;
}

/// Merges every step of `round_id` whose pushes are complete, in step order.
void merge_ready(shard_ptr self, const parameter_shard_setup& setup, std::uint32_t round_id) {
  auto& st = self->state;
  auto found = st.rounds.find(round_id);
  if (found == st.rounds.end() || !found->second.planned)
    return;
  auto& round = found->second;
  while (!round.steps.empty()) {
    auto& [step, at] = *round.steps.begin();
    if (std::any_of(round.workers.begin(), round.workers.end(),
                    [&](kv_worker w) { return holds_up(st, round, at, step, w); }))
      break;
    const float mean = 1.0f / static_cast<float>(at.pushed.size());
    for (auto& value : at.sum)
      value *= mean;
    st.epoch = round.epoch;
    if (setup.server_optimizer)
      optimize(st, setup, at.sum);
    else
      ++st.stats.updates;
    st.latest = frame_of(st, setup, setup.server_optimizer ? std::span<const float>{st.parameters}
                                                           : std::span<const float>{at.sum});
    st.stats.pull_bytes += st.latest.size();
    for (auto& answer : at.answers)
      answer.deliver(kv_values{st.latest});
    st.spare = std::move(at.sum);
    round.steps.erase(round.steps.begin());
  }
  const bool over = round.steps.empty()
                    && std::all_of(round.workers.begin(), round.workers.end(), [&](kv_worker w) {
                         return round.done.count(w) > 0 || st.lost_nodes.count(kv_node_of(w)) > 0;
                       });
  if (over) {
    st.closed.insert(round_id);
    st.rounds.erase(found);
  }
}

/// Whether the push was seen before; remembers it otherwise.
bool seen_before(parameter_shard_state& st, const kv_push& push) {
  if (st.closed.count(push.round) > 0)
    return true;
  auto& latest = st.rounds[push.round].latest[push.worker];
  if (push.step <= latest)
    return true;
  latest = push.step;
  return false;
}

caf::result<kv_values> take_push(shard_ptr self, const parameter_shard_setup& setup,
                                 const kv_push& push) {
  auto& st = self->state;
  if (seen_before(st, push)) {
    ++st.stats.duplicates;
    return kv_values{st.latest};
  }
  if (setup.sync == kv_sync::dist_async) {
    std::fill(st.scratch.begin(), st.scratch.end(), 0.0f);
    if (auto added = add_push(st, setup, push, st.scratch); !added) {
      ++st.stats.rejected;
      return caf::make_error(caf::sec::invalid_argument, "parameter_shard: " + added.err().message);
    }
    ++st.stats.pushes;
    st.stats.push_bytes += push.gradient.size();
    st.rounds.erase(st.rounds.begin(), st.rounds.lower_bound(push.round));
    optimize(st, setup, st.scratch);
    st.latest = frame_of(st, setup, st.parameters);
    st.stats.pull_bytes += st.latest.size();
    return kv_values{st.latest};
  }
  auto& at = st.rounds[push.round].steps[push.step];
  if (at.sum.empty()) {
    at.sum = std::move(st.spare);
    at.sum.assign(setup.range.count, 0.0f);
  }
  if (auto added = add_push(st, setup, push, at.sum); !added) {
    ++st.stats.rejected;
    return caf::make_error(caf::sec::invalid_argument, "parameter_shard: " + added.err().message);
  }
  ++st.stats.pushes;
  st.stats.push_bytes += push.gradient.size();
  at.pushed.insert(push.worker);
  auto answer = self->make_response_promise<kv_values>();
  at.answers.push_back(answer);
  merge_ready(self, setup, push.round);
  return answer;
}

} // namespace

caf::behavior parameter_shard(caf::stateful_actor<parameter_shard_state>* self,
                              parameter_shard_setup setup) {
  auto& st = self->state;
  if (!setup.rule || setup.initial.size() != setup.range.count) {
    self->quit(caf::make_error(
      caf::sec::invalid_argument,
      setup.rule ? fmt::format("parameter_shard: {} initial values for a range of {}",
                               setup.initial.size(), setup.range.count)
                 : std::string{"parameter_shard: no updater"}));
    return {};
  }
  st.parameters = std::move(setup.initial);
  setup.initial.clear();
  st.updater_state.resize(setup.rule->state_size(st.parameters.size()));
  setup.rule->initialize_state(st.updater_state);
  st.scratch.resize(st.parameters.size());
  st.latest = frame_of(st, setup, st.parameters);
  return {
    [self, setup](const kv_push& push) { return take_push(self, setup, push); },
    [self, setup](const kv_round& plan) {
      if (self->state.closed.count(plan.round) > 0)
        return;
      auto& round = self->state.rounds[plan.round];
      round.planned = true;
      round.epoch = plan.epoch;
      round.workers = plan.workers;
      merge_ready(self, setup, plan.round);
    },
    [self, setup](const kv_done& done) {
      if (self->state.closed.count(done.round) > 0)
        return;
      self->state.rounds[done.round].done[done.worker] = done.steps;
      merge_ready(self, setup, done.round);
    },
    [self, setup](forget_atom, std::uint64_t node_id) {
      auto& st = self->state;
      st.lost_nodes.insert(node_id);
      std::vector<std::uint32_t> open;
      for (const auto& [round, _] : st.rounds)
        open.push_back(round);
      for (const auto round : open)
        merge_ready(self, setup, round);
    },
    [self](stats_atom) { return self->state.stats; },
    // A plain pull (kv_client): the latest values, as a push's answer would carry them.
    [self](kv_pull_atom) {
      self->state.stats.pull_bytes += self->state.latest.size();
      return kv_values{self->state.latest};
    },
  };
}

} // namespace strom::actors
