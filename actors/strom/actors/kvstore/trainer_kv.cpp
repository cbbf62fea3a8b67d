// The trainer in kvstore mode (trainer.hpp): a node pushes once a step for all its workers
// (MXNet's local aggregation). Its first trainer keeps the node's pushes: each worker computes its
// gradient and says so (kv_local_step); once every worker still in the round computed the step,
// the first trainer pushes their mean (kv_node_sum.hpp: in slot order, so the same to the bit in
// every run), weighed by their number, and hands each range's answer to the node's other workers
// (kv_local_answer). A worker that finished the round says so (kv_done to the first trainer), so
// that the node's later steps no longer wait for it, and takes their answers all the same. In
// dist_sync a node whose workers all ran out of batches joins the round's later steps without a
// gradient; once it is through and the last push is answered, the shards hear the node's steps
// (kv_done).
// A node of one worker pushes its gradient itself, with no sum and no message between, each key
// range as soon as backward computed it (the later layers' first), so that the transfer and the
// shards' merge overlap the backward of the earlier layers.

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "strom/actors/worker/trainer_steps.hpp"

namespace strom::actors::trainer_steps {

namespace {

/// Whether this trainer pushes for its node: slot 0.
bool pushes_for_node(const trainer_setup& setup) { return setup.worker == 0; }

/// The trainer's kvstore state; its mode is kvstore wherever this is called.
kvstore_worker_state& kv_of(trainer_state& st) {
  return std::get<kvstore_worker_state>(st.mode);
}

/// Whether the trainer keeps its node's pushes: a kvstore trainer of slot 0 (messages for
/// the node's first trainer that reach another are dropped).
bool pushes_here(trainer_state& st) {
  const auto* kv = std::get_if<kvstore_worker_state>(&st.mode);
  return kv && kv->pusher;
}

/// The node's first trainer, for the others: siblings arrive in slot order.
const trainer_sibling_actor& first_trainer(const trainer_state& st) {
  return st.siblings.front();
}

/// The trainer of slot `slot`, for the node's first trainer (slot 0).
const trainer_sibling_actor& trainer_of(const trainer_state& st, std::uint32_t slot) {
  return st.siblings.at(slot - 1);
}

/// Round `round` as the node's first trainer counts it; a new one for a round first heard of.
kv_node_round& node_round(trainer_state& st, std::uint32_t round) {
  auto& entry = kv_of(st).rounds[round];
  if (entry.added.empty()) {
    const auto workers = st.siblings.size() + 1;
    entry.added.assign(workers, 0);
    entry.finished.assign(workers, std::nullopt);
  }
  return entry;
}

/// The replica takes a node step whose every range's answer it holds: the server optimizer's
/// new parameters count one step, or its own updater steps on the merged gradient.
void step_replica(const trainer_setup& setup) {
  auto& replica = *setup.replica;
  if (setup.kv.server_optimizer)
    replica.set_progress(replica.iteration() + 1, replica.epoch());
  else
    replica.apply_gradients();
}

/// Where an answer goes in the replica: the parameters, or the gradients when the worker
/// runs its own updater.
std::span<float> answer_target(const trainer_setup& setup) {
  auto& net = setup.replica->net();
  return setup.kv.server_optimizer ? net.parameters() : net.gradients();
}

/// Range `index`'s answer written into the replica; false once the trainer quit over it.
bool take_values(self_ptr self, const trainer_setup& setup, std::size_t index,
                 const compute::frame& values) {
  auto& st = self->state;
  auto taken = take_kv_values(setup.kv.shards.at(index).range, values, answer_target(setup),
                              st.workspace, kv_of(st).scratch);
  if (!taken)
    self->quit(caf::make_error(caf::sec::runtime_error, "trainer: " + taken.err().message));
  return taken.ok();
}

/// One range's answer to this worker's own step; the step ends with the last.
void take_own(self_ptr self, const trainer_setup& setup, std::size_t index,
              const compute::frame& values) {
  auto& own = kv_of(self->state).own;
  if (!take_values(self, setup, index, values) || --own.waiting != 0)
    return;
  step_replica(setup);
  count_step(self, setup, own.loss, own.samples);
}

/// One range's answer to node step `step` of `round`, which this worker did not carry (it finished
/// its part of the round): taken all the same, so that every replica of the node stays at the
/// node's latest step. With its own updater a replica that skipped a step would stay off the
/// others for good; with the server's, its next round would start a step behind. A node step
/// answers all its ranges before the next goes out.
void take_other(self_ptr self, const trainer_setup& setup, std::uint32_t round,
                std::uint64_t step, std::size_t index, const compute::frame& values) {
  auto& own = kv_of(self->state).own;
  if (own.other_round != round || own.other_step != step) {
    own.other_round = round;
    own.other_step = step;
    own.other_waiting = setup.kv.shards.size();
  }
  if (take_values(self, setup, index, values) && --own.other_waiting == 0)
    step_replica(setup);
}

/// Sends the node's kv_done of the round it finished to `head`.
void send_kv_done(self_ptr self, const trainer_setup& setup, const caf::actor& head,
                  std::uint32_t round, std::uint64_t steps) {
  self->send(head, kv_done{kv_worker_id(setup.framer->node_id(), 0), round, steps});
}

/// The node's push and pull bytes since the last count, into its framer's figures.
void count_traffic(trainer_state& st, const trainer_setup& setup) {
  const auto traffic = kv_of(st).pusher->take_traffic();
  setup.framer->count_kv(traffic.push_bytes, traffic.push_dense_bytes, traffic.pull_bytes);
}

/// Sends range `index`'s unanswered push to its head. A head that is gone (its server lost)
/// is waited out: the job_master re-routes its range to the next replica (kv_reroute) or
/// fails the job.
void send_push(self_ptr self, const trainer_setup& setup, std::size_t index);

/// Node step `step` of `round` goes out, carrying the gradients of the slots `carried`.
void begin_node_step(trainer_state& st, const trainer_setup& setup, std::uint32_t round,
                     std::uint64_t step, std::vector<std::uint32_t> carried);

/// dist_sync: a node whose workers all ran out of batches before the round's busiest worker
/// did (shares differ by a sample, so by a batch at most) joins each later step with a push
/// of weight 0 and no gradient (Horovod's join), and its workers take the step's answer as
/// one they did not carry: every replica of every node ends the round at the same model, and
/// the next round's gradients are all computed at it. A cut round has no such count (workers
/// stop where the cut finds them): kv_done tells the shards where the node stopped.
bool join_next_step(self_ptr self, const trainer_setup& setup, std::uint32_t round) {
  auto& st = self->state;
  auto& node = node_round(st, round);
  if (!setup.kv.joins || st.cut || round != st.epoch || node.pushed >= st.most_steps)
    return false;
  begin_node_step(st, setup, round, node.pushed + 1, {});
  const auto worker = kv_worker_id(setup.framer->node_id(), 0);
  for (std::size_t i = 0; i < setup.kv.shards.size(); ++i) {
    kv_of(st).sent.unanswered[i] = kv_push{worker, round, node.pushed, compute::frame{}, 0};
    send_push(self, setup, i);
  }
  return true;
}

/// Once every worker of the node finished `round` (and joined its later steps) and its last
/// push was answered, the shards stop waiting for the node's pushes of the round, its traffic
/// is counted, and the node's first trainer reports the round's end.
void tell_done_when_through(self_ptr self, const trainer_setup& setup, std::uint32_t round) {
  auto& st = self->state;
  auto& node = node_round(st, round);
  const bool all_finished = std::all_of(node.finished.begin(), node.finished.end(),
                                        [](const auto& steps) { return steps.has_value(); });
  if (node.done_sent || !all_finished || kv_of(st).sent.step != 0
      || join_next_step(self, setup, round))
    return;
  node.done_sent = true;
  for (const auto& head : kv_of(st).sent.heads)
    send_kv_done(self, setup, head, round, node.pushed);
  count_traffic(st, setup);
  if (round == st.epoch && st.finished)
    report_round_end(self, setup);
}

/// Pushes the node's next step of `round` once every worker still in the round added its
/// gradient of it, unless a push is in flight.
void push_when_complete(self_ptr self, const trainer_setup& setup, std::uint32_t round);

/// Range `index`'s answer to the node's push: to every worker of the node, those the push
/// carried and those that finished the round (take_other). Once every range answered, the
/// node's next step may go.
void take_answer(self_ptr self, const trainer_setup& setup, std::size_t index,
                 const kv_values& answer) {
  auto& st = self->state;
  auto& kv = kv_of(st);
  auto& sent = kv.sent;
  kv.pusher->count_answer(answer);
  const auto round = sent.round;
  const auto step = sent.step;
  for (std::uint32_t slot = 1; slot <= st.siblings.size(); ++slot)
    self->send(trainer_of(st, slot),
               kv_local_answer{round, step, static_cast<std::uint32_t>(index), answer.values});
  // Slots in order: slot 0 first when carried; none in a join.
  const bool own = !sent.carried.empty() && sent.carried.front() == 0;
  if (--sent.waiting == 0) {
    sent.step = 0;
    sent.carried.clear();
  }
  if (own)
    take_own(self, setup, index, answer.values);
  else
    take_other(self, setup, round, step, index, answer.values);
  if (sent.step != 0)
    return;
  // Workers that finished the round no longer hold up its next step: it may be complete.
  push_when_complete(self, setup, round);
  tell_done_when_through(self, setup, round);
}

void send_push(self_ptr self, const trainer_setup& setup, std::size_t index) {
  auto& sent = kv_of(self->state).sent;
  const auto send = ++sent.sends[index];
  self->request(sent.heads[index], setup.kv.push_timeout, *sent.unanswered[index])
    .then(
      [self, setup, index, send](const kv_values& answer) {
        auto& sent = kv_of(self->state).sent;
        if (sent.sends[index] != send || !sent.unanswered[index])
          return;
        sent.unanswered[index].reset();
        take_answer(self, setup, index, answer);
      },
      [self, index, send](caf::error& err) {
        const auto& sent = kv_of(self->state).sent;
        if (sent.sends[index] == send && err != caf::sec::request_receiver_down)
          self->quit(std::move(err));
      });
}

void begin_node_step(trainer_state& st, const trainer_setup& setup, std::uint32_t round,
                     std::uint64_t step, std::vector<std::uint32_t> carried) {
  node_round(st, round).pushed = step;
  auto& sent = kv_of(st).sent;
  sent.round = round;
  sent.step = step;
  sent.waiting = setup.kv.shards.size();
  sent.carried = std::move(carried);
}

/// Frames range `index`'s push of the node step in flight from `gradients` (the whole
/// model's, the mean of the carried slots').
void frame_push(trainer_state& st, const trainer_setup& setup, std::size_t index,
                std::span<const float> gradients) {
  auto& kv = kv_of(st);
  auto& sent = kv.sent;
  const auto weight = static_cast<std::uint32_t>(sent.carried.size());
  auto push = kv.pusher->push(index, kv_worker_id(setup.framer->node_id(), 0), sent.round,
                              sent.step, gradients, weight);
  if (!push)
    throw std::runtime_error(push.err().message);
  sent.unanswered[index] = std::move(*push);
}

void push_when_complete(self_ptr self, const trainer_setup& setup, std::uint32_t round) {
  auto& st = self->state;
  // A worker alone on its node pushes during backward (push_during_backward).
  if (!setup.kv_sums || kv_of(st).sent.step != 0 || round != st.epoch)
    return;
  auto& node = node_round(st, round);
  const auto next = node.pushed + 1;
  std::vector<std::uint32_t> carried;
  for (std::uint32_t slot = 0; slot < node.added.size(); ++slot) {
    if (node.finished[slot] && *node.finished[slot] < next)
      continue;
    if (node.added[slot] < next)
      return;  // still computing its gradient of the step
    carried.push_back(slot);
  }
  if (carried.empty())
    return;
  begin_node_step(st, setup, round, next, std::move(carried));
  setup.kv_sums->take_mean(kv_of(st).sent.carried, [&](std::span<const float> mean) {
    for (std::size_t i = 0; i < setup.kv.shards.size(); ++i)
      frame_push(st, setup, i, mean);
  });
  for (std::size_t i = 0; i < setup.kv.shards.size(); ++i)
    send_push(self, setup, i);
}

/// The step of a worker alone on its node: each key range is pushed as soon as backward has
/// computed its gradient, the later layers' while the earlier ones are still computed (the
/// shards may merge them and the transfer runs meanwhile).
void push_during_backward(self_ptr self, const trainer_setup& setup,
                          const compute::batch& batch) {
  auto& st = self->state;
  auto& replica = *setup.replica;
  const auto step = st.batches + 1;
  node_round(st, st.epoch).added[0] = step;
  begin_node_step(st, setup, st.epoch, step, {0});
  // Pushes the ranges whose gradients are final; captured by one pointer, so that handing
  // it to backward allocates nothing.
  struct pushing {
    self_ptr self;
    const trainer_setup& setup;
    std::span<const float> gradients;
    std::size_t unpushed;  // ranges [0, unpushed), in buffer order, wait for backward
    void operator()(std::size_t from) {
      const auto& shards = setup.kv.shards;
      for (; unpushed > 0 && shards[unpushed - 1].range.offset >= from; --unpushed) {
        frame_push(self->state, setup, unpushed - 1, gradients);
        send_push(self, setup, unpushed - 1);
      }
    }
  } push_from{self, setup, replica.net().gradients(), setup.kv.shards.size()};
  kv_of(st).own.loss = compute_step(self, setup, [&] {
    return replica.compute_gradients(batch.features, batch.labels, batch.size,
                                     [&push_from](std::size_t from) { push_from(from); });
  });
  push_from(0);
}

} // namespace

void start_kv(self_ptr self, const trainer_setup& setup) {
  auto& kv = self->state.mode.emplace<kvstore_worker_state>();
  if (!pushes_for_node(setup))
    return;
  kv.pusher.emplace(setup.kv);
  for (const auto& ref : setup.kv.shards)
    kv.sent.heads.push_back(ref.shard);
  kv.sent.unanswered.resize(kv.sent.heads.size());
  kv.sent.sends.resize(kv.sent.heads.size());
}

void kv_step(self_ptr self, const trainer_setup& setup, const compute::batch& batch) {
  auto& st = self->state;
  auto& replica = *setup.replica;
  kv_of(st).own.samples = batch.size;
  kv_of(st).own.waiting = setup.kv.shards.size();
  if (!setup.kv_sums)
    return push_during_backward(self, setup, batch);
  kv_of(st).own.loss = compute_step(self, setup, [&] {
    return replica.compute_gradients(batch.features, batch.labels, batch.size);
  });
  const auto step = st.batches + 1;
  if (!pushes_for_node(setup)) {
    self->send(first_trainer(st), kv_local_step{st.epoch, setup.worker, step});
    return;
  }
  node_round(st, st.epoch).added[0] = step;
  push_when_complete(self, setup, st.epoch);
}

void finish_kv_round(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  if (!pushes_for_node(setup)) {
    self->send(first_trainer(st),
               kv_done{kv_worker_id(setup.framer->node_id(), setup.worker), st.epoch,
                       st.batches});
    return report_round_end(self, setup);
  }
  node_round(st, st.epoch).finished[0] = st.batches;
  push_when_complete(self, setup, st.epoch);
  tell_done_when_through(self, setup, st.epoch);
}

void begin_kv_round(self_ptr self) {
  auto& rounds = kv_of(self->state).rounds;
  rounds.erase(rounds.begin(), rounds.lower_bound(self->state.epoch));
}

void take_local_step(self_ptr self, const trainer_setup& setup, const kv_local_step& step) {
  auto& st = self->state;
  if (!pushes_here(st) || step.slot == 0 || step.slot > st.siblings.size())
    return;  // not the node's first trainer, or no slot of the node: nothing to count
  auto& added = node_round(st, step.round).added[step.slot];
  added = std::max(added, step.step);
  push_when_complete(self, setup, step.round);
}

void take_local_done(self_ptr self, const trainer_setup& setup, const kv_done& done) {
  auto& st = self->state;
  const auto slot = kv_slot_of(done.worker);
  if (!pushes_here(st) || slot == 0 || slot > st.siblings.size())
    return;
  node_round(st, done.round).finished[slot] = done.steps;
  push_when_complete(self, setup, done.round);
  if (done.round == st.epoch)
    tell_done_when_through(self, setup, done.round);
}

void take_local_answer(self_ptr self, const trainer_setup& setup,
                       const kv_local_answer& answer) {
  auto& st = self->state;
  if (!std::holds_alternative<kvstore_worker_state>(st.mode) || answer.round != st.epoch
      || answer.range >= setup.kv.shards.size())
    return;  // a late one of an earlier round (or a stray one)
  if (st.finished)
    take_other(self, setup, answer.round, answer.step, answer.range, answer.values);
  else if (answer.step == st.batches + 1 && kv_of(st).own.waiting != 0)
    take_own(self, setup, answer.range, answer.values);
}

/// Answers the pull of the latest parameters under way with `outcome` (pull_latest).
template <class Outcome>
void end_pull(trainer_state& st, Outcome&& outcome) {
  auto& pulling = kv_of(st).pulling;
  pulling->promise.deliver(std::forward<Outcome>(outcome));
  pulling.reset();
}

/// Asks range `index`'s head for its latest values (pull_latest). A head that is gone is
/// waited out like a push's: the range's re-route sends the pull again (reroute_pushes).
void send_pull(self_ptr self, const trainer_setup& setup, std::size_t index) {
  const auto& kv = kv_of(self->state);
  const auto serial = kv.pulling->serial;
  const auto current = [self, index, serial] {
    const auto& pulling = kv_of(self->state).pulling;
    return pulling && pulling->serial == serial && pulling->waiting[index];
  };
  self->request(kv.sent.heads[index], setup.kv.push_timeout, kv_state_atom_v)
    .then(
      [self, setup, index, current](const kv_shard_state& answer) {
        if (!current())
          return;
        auto& st = self->state;
        auto& kv = kv_of(st);
        auto& pulling = *kv.pulling;
        // The model's updater state is the servers' (what a checkpoint keeps).
        auto& replica = *setup.replica;
        const auto& range = setup.kv.shards[index].range;
        auto taken = take_kv_values(range, answer.parameters, replica.net().parameters(),
                                    st.workspace, kv.scratch);
        if (taken)
          taken = take_kv_state(range, answer.updater_state, replica.updater_state(),
                                replica.net().parameters().size(), st.workspace, kv.scratch);
        if (!taken)
          return end_pull(st, caf::make_error(caf::sec::runtime_error,
                                              "trainer: " + taken.err().message));
        kv.pusher->count_answer(kv_values{answer.parameters});
        pulling.waiting[index] = false;
        if (std::any_of(pulling.waiting.begin(), pulling.waiting.end(), [](bool w) { return w; }))
          return;
        count_traffic(st, setup);
        end_pull(st, kv_pull_atom_v);
      },
      [self, current](caf::error& err) {
        if (current() && err != caf::sec::request_receiver_down)
          end_pull(self->state, std::move(err));
      });
}

void reroute_pushes(self_ptr self, const trainer_setup& setup, const kv_reroute& reroute) {
  auto& st = self->state;
  if (!pushes_here(st))
    return;
  auto& kv = kv_of(st);
  const auto found = kv.rounds.find(st.epoch);
  const bool done_sent = found != kv.rounds.end() && found->second.done_sent;
  for (const auto& head : reroute.heads)
    for (std::size_t i = 0; i < setup.kv.shards.size(); ++i) {
      const auto& range = setup.kv.shards[i].range;
      if (range.key != head.key || range.part != head.part)
        continue;
      kv.sent.heads[i] = head.shard;
      if (kv.pulling && kv.pulling->waiting[i])
        send_pull(self, setup, i);
      if (kv.sent.unanswered[i])
        send_push(self, setup, i);
      else if (done_sent)
        send_kv_done(self, setup, head.shard, st.epoch, found->second.pushed);
    }
}

caf::result<kv_pull_atom> pull_latest(self_ptr self, const trainer_setup& setup) {
  auto& st = self->state;
  if (!pushes_here(st) || !setup.kv.server_optimizer)
    return kv_pull_atom_v;
  auto& kv = kv_of(st);
  if (kv.pulling)
    return caf::make_error(caf::sec::runtime_error, "trainer: a pull of the latest parameters "
                                                    "is under way");
  const auto ranges = setup.kv.shards.size();
  kv.pulling.emplace(kv_latest_pull{self->make_response_promise<kv_pull_atom>(),
                                    std::vector<bool>(ranges, true), ++kv.pulls});
  auto promise = kv.pulling->promise;
  for (std::size_t i = 0; i < ranges; ++i)
    send_pull(self, setup, i);
  return promise;
}

} // namespace strom::actors::trainer_steps
