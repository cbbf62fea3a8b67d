#include "strom/actors/kvstore/parameter_shard.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

using shard_ptr = caf::stateful_actor<parameter_shard_state>*;

/// A frame of `update` for the range; the shard's own data always fits a frame.
compute::frame frame_of(const parameter_shard_state& st, const parameter_shard_setup& setup,
                        const compute::encoded_update& update) {
  compute::frame_header header;
  header.iteration = st.iteration;
  header.epoch = st.epoch;
  auto built = compute::build_update_frame(header, update);
  if (!built)
    throw std::logic_error(fmt::format("parameter_shard: key {} part {}: {}", setup.range.key,
                                       setup.range.part, built.err().message));
  return std::move(*built);
}

/// A dense fp32 frame of `values` for the range.
compute::frame frame_of(const parameter_shard_state& st, const parameter_shard_setup& setup,
                        std::span<const float> values) {
  return frame_of(st, setup, compute::dense_fp32_update(values));
}

/// The answer pushers get: `values` framed in fp32, or in fp16 with fp16_answers. Chain
/// steps and states stay fp32, so the replicas stay equal to the bit.
compute::frame answer_of(parameter_shard_state& st, const parameter_shard_setup& setup,
                         std::span<const float> values) {
  return st.fp16 ? frame_of(st, setup, st.fp16->encode(values)) : frame_of(st, setup, values);
}

/// Decodes `values` (a frame of exactly target.size() elements at offset 0) into `target`,
/// which is zeroed first. `what` names the frame in errors.
result<void> decode_into(parameter_shard_state& st, const parameter_shard_setup& setup,
                         const compute::frame& values, std::span<float> target,
                         const char* what) {
  auto view = compute::read_update_frame(values, st.workspace);
  if (!view)
    return view.err();
  if (view->header.offset != 0 || view->elements != target.size())
    return error{fmt::format("{} of elements {}..{} does not cover key {} part {} ({} elements)",
                             what, view->header.offset, view->header.offset + view->elements,
                             setup.range.key, setup.range.part, target.size())};
  std::fill(target.begin(), target.end(), 0.0f);
  return compute::apply_update_frame(*view, target);
}

/// Commits `gradient` (overwritten): one optimizer step, parameters -= update, or, without the
/// server optimizer, the gradient itself as the answer. Every replica of the range commits the
/// same gradients in the same order with this one function.
void commit(parameter_shard_state& st, const parameter_shard_setup& setup,
            std::span<float> gradient) {
  ++st.seq;
  ++st.stats.updates;
  if (!setup.server_optimizer) {
    st.latest = answer_of(st, setup, gradient);
    return;
  }
  const compute::step_context step{st.iteration, st.epoch,
                                   setup.schedule.rate_at(st.iteration, st.epoch)};
  ++st.iteration;
  setup.rule->apply_step(gradient, st.updater_state, step, st.parameters);
  st.latest = answer_of(st, setup, st.parameters);
}

// -- chain replication ------------------------------------------------------------------------

/// Gives a commit's pushers their values and its predecessor's acknowledgements their number.
void release(parameter_shard_state& st, std::uint64_t seq, held_commit& commit) {
  if (!commit.answers.empty())
    st.stats.pull_bytes += commit.values.size();
  for (auto& answer : commit.answers)
    answer.deliver(kv_values{commit.values});
  for (auto& ack : commit.acks)
    ack.deliver(seq);
}

/// Releases every commit the successor acknowledged (acknowledgements come in order).
void release_up_to(parameter_shard_state& st, std::uint64_t acked) {
  auto end = st.held.upper_bound(acked);
  for (auto it = st.held.begin(); it != end; ++it)
    release(st, it->first, it->second);
  st.held.erase(st.held.begin(), end);
}

/// Sends `message` (a chain step or the whole state) to the successor; its acknowledgement
/// releases what waits for it, unless the successor changed meanwhile.
template <class Message>
void send_down(shard_ptr self, const parameter_shard_setup& setup, Message message) {
  const auto generation = self->state.generation;
  self->request(self->state.successor, setup.chain_timeout, std::move(message))
    .then(
      [self, generation](std::uint64_t acked) {
        if (self->state.generation == generation)
          release_up_to(self->state, acked);
      },
      [self, setup, generation](caf::error& err) {
        if (self->state.generation == generation)
          log::warning("parameter_shard: key {} part {}: no acknowledgement from the next "
                       "replica ({}); its answers wait for the job's new chain",
                       setup.range.key, setup.range.part, error_text(self->system(), err));
      });
}

/// Everything the shard committed, for a new successor.
kv_shard_state state_of(const parameter_shard_state& st, const parameter_shard_setup& setup) {
  kv_shard_state state;
  state.version = st.chain_version;
  state.seq = st.seq;
  state.iteration = st.iteration;
  state.epoch = st.epoch;
  for (const auto& [id, round] : st.rounds)
    state.rounds.push_back(static_cast<const kv_round_record&>(round));
  state.closed.assign(st.closed.begin(), st.closed.end());
  state.lost_nodes.assign(st.lost_nodes.begin(), st.lost_nodes.end());
  state.parameters = frame_of(st, setup, st.parameters);
  state.updater_state = frame_of(st, setup, st.updater_state);
  state.latest = st.latest;
  return state;
}

/// A commit's answers go out now without a successor; with one they wait for it, and
/// `message` (built from the commit) goes down the chain.
template <class Message>
void pass_on(shard_ptr self, const parameter_shard_setup& setup, held_commit commit,
             Message message) {
  auto& st = self->state;
  if (!st.successor)
    return release(st, st.seq, commit);
  auto& held = st.held[st.seq];
  held.values = std::move(commit.values);
  for (auto& answer : commit.answers)
    held.answers.push_back(std::move(answer));
  for (auto& ack : commit.acks)
    held.acks.push_back(std::move(ack));
  send_down(self, setup, std::move(message));
}

/// The chain step of the commit just made of `mean` (framed before the commit overwrote it).
kv_chain_step chain_step_of(const parameter_shard_state& st, std::uint32_t round,
                            std::uint64_t step, std::vector<kv_worker> workers,
                            compute::frame mean) {
  return {st.chain_version, st.seq, round, st.epoch, step, std::move(workers), std::move(mean)};
}

/// Marks `workers`' pushes of `step` as committed in `round`.
void note_committed(parameter_shard_state& st, std::uint32_t round, std::uint64_t step,
                    const std::vector<kv_worker>& workers) {
  if (st.closed.count(round) > 0)
    return;
  auto& record = st.rounds[round];
  record.round = round;
  for (const auto worker : workers)
    record.latest[worker] = std::max(record.latest[worker], step);
}

/// A predecessor's commit, committed here the same way, then passed on.
caf::result<std::uint64_t> take_chain_step(shard_ptr self, const parameter_shard_setup& setup,
                                           kv_chain_step& step) {
  auto& st = self->state;
  if (step.version < st.chain_version)
    return caf::make_error(caf::sec::invalid_argument,
                           fmt::format("parameter_shard: a chain step of configuration {} "
                                       "after {}",
                                       step.version, st.chain_version));
  st.chain_version = step.version;
  if (step.seq <= st.seq)  // committed already (it came again after a chain change)
    return step.seq;
  if (step.seq != st.seq + 1)
    return caf::make_error(caf::sec::invalid_argument,
                           fmt::format("parameter_shard: chain step {} after commit {}",
                                       step.seq, st.seq));
  if (auto decoded = decode_into(st, setup, step.mean, st.scratch, "a chain step"); !decoded)
    return caf::make_error(caf::sec::invalid_argument,
                           "parameter_shard: " + decoded.err().message);
  note_committed(st, step.round, step.step, step.workers);
  st.epoch = step.epoch;
  auto mean = st.successor ? std::move(step.mean) : compute::frame{};
  commit(st, setup, st.scratch);
  if (!st.successor)
    return st.seq;
  auto ack = self->make_response_promise<std::uint64_t>();
  pass_on(self, setup, held_commit{st.latest, {}, {ack}},
          chain_step_of(st, step.round, step.step, std::move(step.workers), std::move(mean)));
  return ack;
}

/// A new predecessor's whole state, taken in place of this shard's (its round plans merged
/// with the ones the job_master sent here), then passed on.
caf::result<std::uint64_t> take_state(shard_ptr self, const parameter_shard_setup& setup,
                                      kv_shard_state& state) {
  auto& st = self->state;
  if (state.version < st.chain_version)
    return caf::make_error(caf::sec::invalid_argument,
                           fmt::format("parameter_shard: a state of configuration {} after {}",
                                       state.version, st.chain_version));
  std::vector<float> parameters(st.parameters.size());
  std::vector<float> updater_state(st.updater_state.size());
  for (auto [frame, target, what] :
       {std::tuple{&state.parameters, std::span<float>{parameters}, "the parameters"},
        std::tuple{&state.updater_state, std::span<float>{updater_state}, "the updater state"}})
    if (auto decoded = decode_into(st, setup, *frame, target, what); !decoded)
      return caf::make_error(caf::sec::invalid_argument,
                             "parameter_shard: " + decoded.err().message);
  st.chain_version = state.version;
  st.parameters = std::move(parameters);
  st.updater_state = std::move(updater_state);
  st.seq = st.stats.updates = state.seq;
  st.iteration = state.iteration;
  st.epoch = state.epoch;
  st.latest = state.latest;
  st.closed.insert(state.closed.begin(), state.closed.end());
  st.lost_nodes.insert(state.lost_nodes.begin(), state.lost_nodes.end());
  for (auto& record : state.rounds) {
    if (st.closed.count(record.round) > 0)
      continue;
    auto& round = st.rounds[record.round];
    if (!round.planned && record.planned) {
      round.planned = true;
      round.epoch = record.epoch;
      round.workers = std::move(record.workers);
    }
    round.round = record.round;
    round.done.insert(record.done.begin(), record.done.end());
    round.latest = std::move(record.latest);
  }
  for (const auto round : st.closed)
    st.rounds.erase(round);
  if (!st.successor)
    return st.seq;
  ++st.generation;  // what the successor acknowledged before no longer tells what it holds
  auto ack = self->make_response_promise<std::uint64_t>();
  pass_on(self, setup, held_commit{st.latest, {}, {ack}}, state_of(st, setup));
  return ack;
}

/// The job_master's new chain: a new successor first gets everything committed here.
void take_link(shard_ptr self, const parameter_shard_setup& setup, const kv_chain_link& link) {
  auto& st = self->state;
  if (link.version < st.chain_version)
    return;
  st.chain_version = link.version;
  if (link.successor == st.successor)
    return;
  st.successor = link.successor;
  ++st.generation;
  if (!st.successor)
    return release_up_to(st, st.seq);
  send_down(self, setup, state_of(st, setup));  // its acknowledgement releases all held
}

// -- pushes -------------------------------------------------------------------------------------

/// Reads a push's gradient and adds it into `target` (range.count floats), `weight` times.
result<void> add_push(parameter_shard_state& st, const parameter_shard_setup& setup,
                      const kv_push& push, std::span<float> target, std::uint32_t weight = 1) {
  auto view = compute::read_update_frame(push.gradient, st.workspace);
  if (!view)
    return view.err();
  if (view->header.offset != 0 || view->elements != setup.range.count)
    return error{fmt::format("a push of elements {}..{} does not cover key {} part {} "
                             "({} elements)",
                             view->header.offset, view->header.offset + view->elements,
                             setup.range.key, setup.range.part, setup.range.count)};
  if (weight == 1)
    return compute::apply_update_frame(*view, target);
  // A node's mean of several workers' gradients (local aggregation): decoded aside, then
  // weighed, so that the step's mean counts every worker's gradient alike.
  std::fill(st.scratch.begin(), st.scratch.end(), 0.0f);
  if (auto decoded = compute::apply_update_frame(*view, st.scratch); !decoded)
    return decoded;
  const auto factor = static_cast<float>(weight);
  for (std::size_t i = 0; i < target.size(); ++i)
    target[i] += factor * st.scratch[i];
  return success();
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
    if (at.weight == 0) {  // joins alone (the step's pushers were lost): nothing to step on
      for (auto& answer : at.answers)
        answer.deliver(kv_values{st.latest});
      for (const auto worker : at.pushed)
        round.latest[worker] = step;
      round.steps.erase(round.steps.begin());
      continue;
    }
    const float mean = 1.0f / static_cast<float>(at.weight);
    for (auto& value : at.sum)
      value *= mean;
    st.epoch = round.epoch;
    std::vector<kv_worker> pushed(at.pushed.begin(), at.pushed.end());
    for (const auto worker : pushed)
      round.latest[worker] = step;
    auto mean_frame = st.successor ? frame_of(st, setup, at.sum) : compute::frame{};
    commit(st, setup, at.sum);
    pass_on(self, setup, held_commit{st.latest, std::move(at.answers), {}},
            chain_step_of(st, round_id, step, std::move(pushed), std::move(mean_frame)));
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

/// Whether the push was seen before, taken (on this head) or committed (down a chain this
/// shard was part of); remembers it otherwise.
bool seen_before(parameter_shard_state& st, const kv_push& push) {
  if (st.closed.count(push.round) > 0)
    return true;
  auto& round = st.rounds[push.round];
  round.round = push.round;
  auto& taken = round.taken[push.worker];
  if (push.step <= std::max(taken, round.latest[push.worker]))
    return true;
  taken = push.step;
  return false;
}

caf::result<kv_values> take_push(shard_ptr self, const parameter_shard_setup& setup,
                                 const kv_push& push) {
  auto& st = self->state;
  const bool join = push.weight == 0;
  if (push.weight > max_kv_push_weight
      || (join && (setup.sync != kv_sync::dist_sync || push.gradient.size() != 0))) {
    ++st.stats.rejected;
    return caf::make_error(caf::sec::invalid_argument,
                           fmt::format("parameter_shard: a push of weight {} (1 to {}, or 0 "
                                       "for a join without a gradient in dist_sync)",
                                       push.weight, max_kv_push_weight));
  }
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
    st.rounds[push.round].latest[push.worker] = push.step;
    auto mean_frame = st.successor ? frame_of(st, setup, st.scratch) : compute::frame{};
    commit(st, setup, st.scratch);
    if (!st.successor) {
      st.stats.pull_bytes += st.latest.size();
      return kv_values{st.latest};
    }
    auto answer = self->make_response_promise<kv_values>();
    pass_on(self, setup, held_commit{st.latest, {answer}, {}},
            chain_step_of(st, push.round, push.step, {push.worker}, std::move(mean_frame)));
    return answer;
  }
  auto& at = st.rounds[push.round].steps[push.step];
  if (!join) {
    if (at.sum.empty()) {
      at.sum = std::move(st.spare);
      at.sum.assign(setup.range.count, 0.0f);
    }
    if (auto added = add_push(st, setup, push, at.sum, push.weight); !added) {
      ++st.stats.rejected;
      return caf::make_error(caf::sec::invalid_argument,
                             "parameter_shard: " + added.err().message);
    }
    ++st.stats.pushes;
    st.stats.push_bytes += push.gradient.size();
  }
  at.pushed.insert(push.worker);
  at.weight += push.weight;
  auto answer = self->make_response_promise<kv_values>();
  at.answers.push_back(answer);
  merge_ready(self, setup, push.round);
  return answer;
}

} // namespace

caf::behavior parameter_shard(caf::stateful_actor<parameter_shard_state>* self,
                              parameter_shard_setup setup) {
  auto& st = self->state;
  const auto state_size = setup.rule ? setup.rule->state_size(setup.range.count) : 0;
  if (!setup.rule || setup.initial.size() != setup.range.count
      || (!setup.initial_state.empty() && setup.initial_state.size() != state_size)) {
    self->quit(caf::make_error(
      caf::sec::invalid_argument,
      !setup.rule ? std::string{"parameter_shard: no updater"}
                  : fmt::format("parameter_shard: {} initial values and {} of updater state for "
                                "a range of {}",
                                setup.initial.size(), setup.initial_state.size(),
                                setup.range.count)));
    return {};
  }
  st.parameters = std::move(setup.initial);
  setup.initial.clear();
  st.iteration = setup.iteration;
  if (setup.initial_state.empty()) {
    st.updater_state.resize(state_size);
    setup.rule->initialize_state(st.updater_state);
  } else {
    st.updater_state = std::move(setup.initial_state);
    setup.initial_state.clear();
  }
  st.scratch.resize(st.parameters.size());
  if (setup.fp16_answers)
    st.fp16.emplace(st.parameters.size());
  st.latest = answer_of(st, setup, st.parameters);
  return {
    [self, setup](const kv_push& push) { return take_push(self, setup, push); },
    [self, setup](const kv_round& plan) {
      if (self->state.closed.count(plan.round) > 0)
        return;
      auto& round = self->state.rounds[plan.round];
      round.round = plan.round;
      round.planned = true;
      round.epoch = plan.epoch;
      round.workers = plan.workers;
      merge_ready(self, setup, plan.round);
    },
    [self, setup](const kv_done& done) {
      auto& st = self->state;
      if (st.closed.count(done.round) == 0) {
        st.rounds[done.round].round = done.round;
        st.rounds[done.round].done[done.worker] = done.steps;
        merge_ready(self, setup, done.round);
      }
      // Behind the commits it made, so a replica closes the round where this shard did.
      if (st.successor)
        self->send(st.successor, done);
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
    [self, setup](const kv_chain_link& link) { take_link(self, setup, link); },
    [self, setup](kv_chain_step& step) { return take_chain_step(self, setup, step); },
    [self, setup](kv_shard_state& state) { return take_state(self, setup, state); },
    // A plain pull (kv_client): the latest values, as a push's answer would carry them.
    [self](kv_pull_atom) {
      self->state.stats.pull_bytes += self->state.latest.size();
      return kv_values{self->state.latest};
    },
    // An evaluation's pull: parameters and updater state in fp32, for the checkpoint.
    [self, setup](kv_state_atom) { return state_of(self->state, setup); },
  };
}

} // namespace strom::actors
