#include "strom/actors/cluster/node_agent.hpp"
#include "strom/actors/cluster/node_agent_steps.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/worker/snapshot_transfer.hpp"
#include "strom/actors/job/stall_watch.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/log.hpp"

namespace strom::actors {

void agent_steps::run_aside(self_ptr self,
                            std::function<void(caf::blocking_actor*, const caf::actor&)> work) {
  // Spawned by the system, not by `self`: a helper spawned by an actor keeps its spawner's
  // execution context, which CAF's test coordinator (a live simulation) makes on its stack.
  self->home_system().spawn(
    [work = std::move(work), agent = caf::actor_cast<caf::actor>(self)](
      caf::blocking_actor* helper) { work(helper, agent); });
}

void agent_steps::end_actor(self_ptr self, const caf::actor& member) {
  self->demonitor(member);
  self->send_exit(member, caf::exit_reason::user_shutdown);
}

namespace {

using agent_steps::chains_wired;
using agent_steps::connect_servers;
using agent_steps::end_actor;
using agent_steps::guarded;
using agent_steps::is_served_shard;
using agent_steps::reach_new_heads;
using agent_steps::retire_stages;
using agent_steps::run_aside;
using agent_steps::run_stage;
using agent_steps::self_ptr;
using agent_steps::serve;
using agent_steps::take_aside_outcome;
using agent_steps::take_update;
using agent_steps::wire_chains;
using agent_steps::wired;

void stop_job(self_ptr self) {
  auto& st = self->state;
  for (const auto& relay : st.reporting_relays)
    end_actor(self, relay);
  st.reporting_relays.clear();
  if (st.served) {
    for (const auto& shard : st.served->shards)
      end_actor(self, shard);
    for (const auto& stage : st.served->subnets)
      end_actor(self, stage);
  }
  st.served.reset();
  if (!st.run)
    return;
  for (const auto& member : st.run->actors.all())
    end_actor(self, member);
  st.run.reset();
}

/// The scheduler's view of this node's epoch.
node_epoch_report epoch_report_of(const node_agent_state& st) {
  const auto& run = *st.run;
  node_epoch_report report;
  report.job_id = run.job_id;
  report.node_id = st.node_id;
  report.round = run.round;
  report.steps = run.steps;
  report.totals = run.totals;
  report.iteration = run.iteration;
  report.drained = run.drains;
  return report;
}

/// The node's figures in its job, but its relay's counts.
node_metrics node_figures(const node_agent_setup& setup, const node_job_run& run) {
  node_metrics figures;
  figures.node = setup.identity.name;
  figures.job_id = run.job_id;
  figures.samples = run.job_totals.samples;
  figures.steps = run.job_totals.batches;
  figures.loss_sum = run.job_totals.loss_sum;
  figures.sent = run.actors.framer->stats();
  return figures;
}

/// Asks the relay for its counts: the next progress report carries the bytes it received, and
/// setup.metrics (if any) is told the node's figures with them.
void count_relay(self_ptr self, const node_agent_setup& setup) {
  auto& st = self->state;
  if (!st.run)
    return;
  const auto& run = *st.run;
  std::optional<node_metrics> figures;
  if (setup.metrics)
    figures = node_figures(setup, run);
  self->request(run.actors.relay, setup.timeouts.answer_timeout, stats_atom_v)
    .then(
      [self, sink = setup.metrics, figures, job_id = run.job_id](const relay_stats& relayed) mutable {
        if (auto& now = self->state.run; now && now->job_id == job_id)
          now->relay_bytes_received = relayed.bytes_received;
        if (figures) {
          figures->relayed = relayed;
          sink->node(*figures);
        }
      },
      [](caf::error&) {});  // a relay that ended with its job has nothing more to count
}

/// Answers the stall watch with what each of the job's trainers does; a trainer that does not
/// answer within trainer_activity_limit (busy in a long step) is marked so.
void tell_activity(self_ptr self, std::uint64_t job_id) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  auto gathered = std::make_shared<node_activity>();
  gathered->job_id = job_id;
  gathered->node_id = st.node_id;
  if (!st.run || st.run->job_id != job_id || st.run->actors.trainers.empty()) {
    promise.deliver(*gathered);
    return;
  }
  const auto& trainers = st.run->actors.trainers;
  gathered->workers.resize(trainers.size());
  auto left = std::make_shared<std::size_t>(trainers.size());
  for (std::uint32_t w = 0; w < trainers.size(); ++w) {
    gathered->workers[w].worker = w;
    gathered->workers[w].answered = false;
    self->request(trainers[w], trainer_activity_limit, stall_atom_v)
      .then(
        [gathered, left, promise, w](const worker_activity& activity) mutable {
          gathered->workers[w] = activity;
          if (--*left == 0)
            promise.deliver(*gathered);
        },
        [gathered, left, promise](caf::error&) mutable {
          if (--*left == 0)
            promise.deliver(*gathered);
        });
  }
}

/// Tells the scheduler (and setup.metrics) how far the node got: a few times a second, and
/// at each round's end, so that a round shorter than progress_interval is reported too.
void report_progress(self_ptr self, const node_agent_setup& setup) {
  auto& st = self->state;
  auto& run = *st.run;
  run.progress_sent = self->clock().now();
  self->send(setup.scheduler, node_progress{run.job_id, st.node_id, run.round,
                                            run.totals.batches, run.totals.samples,
                                            run.totals.loss_sum, run.job_totals.samples,
                                            run.actors.framer->stats(),
                                            run.relay_bytes_received});
  count_relay(self, setup);
}

/// Every trainer finished and drained the round: report it.
void end_round(self_ptr self, const node_agent_setup& setup) {
  auto& st = self->state;
  auto& run = *st.run;
  run.totals.seconds =
    std::chrono::duration<double>(self->clock().now() - run.round_started).count();
  report_progress(self, setup);
  self->send(setup.scheduler, epoch_report_of(st));
}

/// Why `plan` does not fit this node's job, or nothing: the plan is a peer's message.
std::optional<std::string> misfit(const node_job_run& run, const round_plan& plan) {
  if (plan.workers.size() != run.actors.trainers.size())
    return fmt::format("a plan for {} workers reached a node of {}", plan.workers.size(),
                       run.actors.trainers.size());
  const auto samples = run.job->node.train->size();
  for (const auto& work : plan.workers) {
    if (work.ranks > 0 && work.rank >= work.ranks)
      return fmt::format("partition {} of {} does not exist", work.rank, work.ranks);
    for (const auto index : work.indices)
      if (index >= samples)
        return fmt::format("sample {} is past the training set's {}", index, samples);
  }
  return std::nullopt;
}

/// Starts a round: each trainer its work.
void start_round(self_ptr self, const node_agent_setup& setup, round_plan& plan) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != plan.job_id)
    return;
  auto& run = *st.run;
  if (const auto why = misfit(run, plan)) {
    self->send(setup.scheduler,
               node_failure{run.job_id, st.node_id, "refused the round plan: " + *why});
    return;
  }
  run.round = plan.round;
  run.totals = {};
  run.steps.assign(plan.workers.size(), 0);
  run.epochs_reported = 0;
  run.drained = 0;
  run.drains = {};
  run.round_started = run.progress_sent = self->clock().now();
  for (std::size_t w = 0; w < plan.workers.size(); ++w)
    self->send(run.actors.trainers[w], std::move(plan.workers[w]));
}

/// Evaluates the first replica (evaluate) on a thread aside.
void evaluate_aside(self_ptr self, std::uint64_t job_id, std::uint32_t epoch) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != job_id || !st.pending_check)
    return;  // the job stopped meanwhile
  auto slot = std::make_shared<std::optional<result<epoch_check>>>();
  st.checked = slot;
  run_aside(self, [slot, job = st.run->job, job_id, epoch](caf::blocking_actor* helper,
                                                           const caf::actor& agent) {
    slot->emplace(guarded<epoch_check>(
      [&] { return job->end_epoch(*job->node.replicas.front(), epoch); }));
    helper->send(agent, checked_atom_v, job_id, epoch);
  });
}

/// Evaluates (and checkpoints) the first replica on a thread aside, once its trainer took the
/// model's latest parameters (kvstore: the shards hold them); the answer goes out when its
/// checked_atom arrives.
void evaluate(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id,
              std::uint32_t epoch) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  if (!st.run || st.run->job_id != job_id || !st.run->job->end_epoch || st.pending_check) {
    promise.deliver(make_error(strom_error::bad_job,
                               fmt::format("node {} cannot evaluate job {} now", st.node_id,
                                           job_id)));
    return;
  }
  st.pending_check = promise;
  const auto& trainers = st.run->actors.trainers;
  if (trainers.empty())
    return evaluate_aside(self, job_id, epoch);  // pipeline stages: no trainer
  self->request(trainers.front(), setup.timeouts.answer_timeout, kv_pull_atom_v)
    .then([self, job_id, epoch](kv_pull_atom) { evaluate_aside(self, job_id, epoch); },
          [self, job_id](const caf::error& err) {
            auto& st = self->state;
            if (!st.pending_check || !st.run || st.run->job_id != job_id)
              return;
            std::exchange(st.pending_check, std::nullopt)
              ->deliver(make_error(strom_error::bad_job,
                                   fmt::format("node {} could not take the shards' parameters: {}",
                                               st.node_id, error_text(self->system(), err))));
          });
}

/// Passes `args` to every trainer of job `job_id` when the node runs it.
template <class... Ts>
void tell_trainers(self_ptr self, std::uint64_t job_id, const Ts&... args) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != job_id)
    return;
  for (const auto& trainer : st.run->actors.trainers)
    self->send(trainer, args...);
}

/// Origins a snapshot may name: its bound allows this many origin entries (a few bytes each).
constexpr std::size_t max_snapshot_origins = 1 << 16;

/// The source side of a restore: the node's first trainer sends its snapshot to `receiver`.
caf::result<snapshot_sent> send_snapshot(self_ptr self, const node_agent_setup& setup,
                                         std::uint64_t job_id, const caf::actor& receiver) {
  auto& st = self->state;
  if (!st.run || st.run->job_id != job_id)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("node {} runs no job {}", st.node_id, job_id));
  auto promise = self->make_response_promise<snapshot_sent>();
  return promise.delegate(st.run->actors.trainers.front(), snapshot_atom_v, receiver);
}

/// Most bytes a snapshot `receiver`'s model takes, with as many origins as a snapshot may name.
std::size_t snapshot_bound_of(const compute::replica& receiver) {
  return compute::snapshot_bytes_bound(receiver, max_snapshot_origins);
}

/// Every trainer of the running job takes `snapshot`; `promise` is answered `sent` once all
/// did, or with the first error.
void apply_snapshot(self_ptr self, const node_agent_setup& setup, const compute::frame& snapshot,
                    const snapshot_sent& sent, caf::response_promise promise) {
  auto& trainers = self->state.run->actors.trainers;
  auto pending = std::make_shared<std::size_t>(trainers.size());
  for (const auto& trainer : trainers)
    self->request(trainer, setup.timeouts.snapshot_timeout, restore_atom_v,
                  assembled_snapshot{snapshot})
      .then(
        [promise, pending, sent](bool) mutable {
          if (*pending > 0 && --*pending == 0)
            promise.deliver(sent);
        },
        [promise, pending](caf::error& err) mutable {
          if (*pending == 0)
            return;
          *pending = 0;  // the first error answers; later answers find nothing pending
          promise.deliver(std::move(err));
        });
}

/// Whether job `job_id` is being prepared here.
bool preparing(const node_agent_state& st, std::uint64_t job_id) {
  return st.pending_ready && st.pending_job_id == job_id;
}

/// Answers the restore asked for while the job was prepared, if any, with `why` (when its
/// promise is not with a snapshot on its way), and forgets it.
void drop_early_restore(self_ptr self, caf::error why) {
  auto& st = self->state;
  if (st.early && !st.incoming)
    st.early->promise.deliver(std::move(why));
  st.early.reset();
}

/// Asks `source` for its snapshot of job `job_id` (at most `bound` bytes) and assembles the
/// chunks; the running job's trainers take it, or, while the job is still prepared, it waits
/// for them (st.early). `promise` is answered once they took it, or with why not.
void fetch_snapshot(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id,
                    const caf::actor& source, std::size_t bound, caf::response_promise promise) {
  auto& st = self->state;
  st.incoming.emplace(snapshot_receipt{compute::snapshot_assembler{bound}, promise,
                                       source.address()});
  self->monitor(source);  // a source lost meanwhile never answers (the down handler)
  // The chunks come before this answer: the source trainer sent them before it answered its
  // agent, and messages between two nodes keep their order.
  self->request(source, setup.timeouts.snapshot_timeout, snapshot_atom_v, job_id,
                caf::actor_cast<caf::actor>(self))
    .then(
      [self, setup, source, job_id](const snapshot_sent& sent) {
        auto& st = self->state;
        auto receipt = settle(self, st.incoming, source);
        if (!receipt)
          return;  // given up at the source's loss
        auto snapshot = compute::take_assembled(std::move(receipt->incoming));
        auto promise = receipt->promise;
        if (snapshot && st.run && st.run->job_id == job_id)
          return apply_snapshot(self, setup, *snapshot, sent, promise);
        if (snapshot && st.early && preparing(st, job_id)) {
          st.early->promise = promise;
          st.early->snapshot = std::move(*snapshot);
          st.early->sent = sent;
          return;
        }
        st.early.reset();
        promise.deliver(make_error(
          strom_error::snapshot_failed,
          fmt::format("node {}: snapshot refused: {}", st.node_id,
                      snapshot ? "the job was stopped" : snapshot.err().message)));
      },
      [self, source](caf::error& err) {
        if (auto receipt = settle(self, self->state.incoming, source)) {
          self->state.early.reset();
          receipt->promise.deliver(std::move(err));
        }
      });
}

/// The receiving side of a restore (a node joining a running job, its trainers idle): asks
/// `source` for its snapshot and has every trainer take it. A job still prepared takes it
/// beside its data loading: fetched once the replicas are built (their bound), taken once the
/// trainers run.
void restore(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id,
             const caf::actor& source) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  const bool running = st.run && st.run->job_id == job_id;
  if ((!running && !preparing(st, job_id)) || st.incoming || st.early) {
    promise.deliver(make_error(strom_error::snapshot_failed,
                               fmt::format("node {} cannot take a snapshot of job {} now",
                                           st.node_id, job_id)));
    return;
  }
  if (running)
    return fetch_snapshot(self, setup, job_id, source,
                          snapshot_bound_of(*st.run->job->node.replicas.front()), promise);
  st.early.emplace(early_restore{source, promise, std::nullopt, {}});
  if (st.prepared_bound > 0)
    fetch_snapshot(self, setup, job_id, source, st.prepared_bound, promise);
}

/// The replicas of job `job_id` being prepared are built: a restore asked for meanwhile
/// fetches its snapshot now, while the data loads.
void replicas_ready(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id,
                    std::uint64_t bound) {
  auto& st = self->state;
  if (!preparing(st, job_id))
    return;
  st.prepared_bound = static_cast<std::size_t>(bound);
  if (st.early && !st.early->snapshot && !st.incoming)
    fetch_snapshot(self, setup, job_id, st.early->source, st.prepared_bound, st.early->promise);
}

/// The job prepared here runs: a restore asked for meanwhile has its trainers take the
/// snapshot, once it arrived (at once when it did).
void restore_when_running(self_ptr self, const node_agent_setup& setup) {
  auto& st = self->state;
  if (!st.early)
    return;
  auto early = std::move(*st.early);
  st.early.reset();
  if (early.snapshot)
    apply_snapshot(self, setup, *early.snapshot, early.sent, early.promise);
  else if (!st.incoming)  // never fetched: its replicas' bound never came
    fetch_snapshot(self, setup, st.run->job_id, early.source,
                   snapshot_bound_of(*st.run->job->node.replicas.front()), early.promise);
  // else its chunks are on their way: the trainers take it when it is whole
}

void checked(self_ptr self, std::uint64_t job_id) {
  auto& st = self->state;
  if (auto done = take_aside_outcome(self, st.pending_check, st.checked, job_id))
    done->first.deliver(std::move(done->second));
}

/// Seconds of `span`, for messages.
double seconds_of(caf::timespan span) { return std::chrono::duration<double>(span).count(); }

/// The scheduler dropped this node: its job is dead there, so the agent ends with the reason.
void leave_dropped(self_ptr self, const std::string& reason) {
  stop_job(self);
  self->quit(make_error(strom_error::node_dropped, "dropped by the scheduler: " + reason));
}

/// Asks the scheduler whether this node is still a member; ends the agent when the
/// scheduler has not answered for the reconnect timeout.
void send_keepalive(self_ptr self, const node_agent_setup& setup) {
  self->request(setup.scheduler, setup.timeouts.reconnect_timeout, keepalive_atom_v,
                self->state.node_id)
    .then(
      [self](const keepalive_reply& reply) {
        self->state.last_answer = self->clock().now();
        if (reply.dropped)
          leave_dropped(self, reply.reason);
      },
      [self, setup](caf::error& err) {
        const auto silent = self->clock().now() - self->state.last_answer;
        if (silent < setup.timeouts.reconnect_timeout)
          return;  // a later keepalive was answered, or this one failed early: not yet
        stop_job(self);
        self->quit(make_error(
          strom_error::timeout,
          fmt::format("gave up on the scheduler after {:g} s without an answer "
                      "(--reconnect-timeout {:g} s): {}",
                      seconds_of(silent), seconds_of(setup.timeouts.reconnect_timeout),
                      error_text(self->system(), err))));
      });
  self->delayed_send(self, setup.timeouts.keepalive_interval, caf::tick_atom_v);
}

void prepare(self_ptr self, const node_agent_setup& setup, job_assignment assignment) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  if (st.node_id == 0 || st.run || st.pending_ready) {
    promise.deliver(make_error(strom_error::node_busy,
                               fmt::format("node {} is busy or has not joined", st.node_id)));
    return;
  }
  // The scheduler's message is outside input: never build more replicas than offered.
  if (assignment.workers == 0 || assignment.workers > setup.identity.workers) {
    promise.deliver(make_error(strom_error::bad_job,
                               fmt::format("node {} offers {} workers, the job asks for {}",
                                           st.node_id, setup.identity.workers,
                                           assignment.workers)));
    return;
  }
  st.pending_ready = promise;
  st.pending_job_id = assignment.job_id;
  st.prepared_bound = 0;
  auto slot = std::make_shared<std::optional<result<node_job>>>();
  st.prepared = slot;
  run_aside(self, [slot, assignment, factory = setup.prepare, connect = setup.connect_relay,
                   node = st.node_id](caf::blocking_actor* helper, const caf::actor& agent) {
    const auto built = [&](const compute::replica& replica) {
      helper->send(agent, built_atom_v, assignment.job_id,
                   static_cast<std::uint64_t>(snapshot_bound_of(replica)));
    };
    slot->emplace(guarded<node_job>([&] { return factory(assignment, built); }));
    if (**slot && connect)
      (**slot)->server_links = connect_servers(node, assignment.server_endpoints, connect);
    helper->send(agent, prepared_atom_v, assignment);
  });
}

void prepared(self_ptr self, const node_agent_setup& setup, const job_assignment& assignment) {
  auto& st = self->state;
  // A job stopped while it was prepared is dropped here: its slot was let go.
  if (!st.pending_ready || !st.prepared || st.pending_job_id != assignment.job_id
      || !st.prepared->has_value())
    return;
  auto promise = std::move(*st.pending_ready);
  st.pending_ready.reset();
  auto outcome = std::move(**st.prepared);
  st.prepared.reset();
  if (!outcome) {
    log::emit(setup.failures_reported ? log::level::debug : log::level::warning,
              "node {}: job {} cannot run here: {}", st.node_id, assignment.job_id,
              outcome.err().message);
    promise.deliver(make_error(strom_error::bad_job, outcome.err().message));
    drop_early_restore(self, make_error(strom_error::bad_job, outcome.err().message));
    return;
  }
  auto job = std::make_shared<node_job>(std::move(*outcome));
  job->node.node_id = st.node_id;
  job->node.supervisor = caf::actor_cast<trainer_supervisor_actor>(self);
  job->node.timeline = setup.timeline;
  job->node.park_spin = setup.timeouts.park_spin;
  job->node.speed = setup.speed;
  job->node.meter = setup.meter;
  auto& run = st.run.emplace();
  run.job_id = assignment.job_id;
  run.rank = assignment.rank;
  run.job = job;
  run.servers_reached = {assignment.server_endpoints.begin(), assignment.server_endpoints.end()};
  run.actors = spawn_local_node(self->system(), job->node);
  for (const auto& member : run.actors.all())
    self->monitor(member);
  if (assignment.hub)
    self->send(run.actors.relay, add_peer_atom_v,
               setup.reach_relay ? setup.reach_relay(assignment.hub) : assignment.hub);
  node_ready ready{assignment.job_id, st.node_id, run.actors.relay, job->job_name,
                   job->epochs, job->batches_per_epoch, job->samples_per_epoch};
  ready.train_samples = job->node.train->size();
  ready.batch_size = static_cast<std::uint32_t>(job->node.batch_size);
  ready.workers = static_cast<std::uint32_t>(run.actors.trainers.size());
  ready.seed = job->node.seed;
  ready.shuffle = job->node.shuffle;
  ready.averaging_frequency = job->node.averaging.frequency;
  ready.mode = job->mode;
  ready.kvstore = job->kvstore;
  ready.device = job->device;
  // Opening a listening port does not block (the port's guard thread accepts). Only a mesh
  // needs it: without it a plain job still runs, and a mesh job fails naming this node.
  if (setup.publish_relay) {
    auto published =
      guarded<published_relay>([&] { return setup.publish_relay(run.actors.relay); });
    if (published) {
      ready.relay_endpoint = published->endpoint;
      run.relay_port = std::move(published->port);
    } else {
      log::warning("node {}: cannot publish job {}'s relay for mesh neighbours: {}", st.node_id,
                   assignment.job_id, published.err().message);
    }
  }
  promise.deliver(std::move(ready));
  restore_when_running(self, setup);
}

void stop(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id) {
  auto& st = self->state;
  auto promise = self->make_response_promise();
  if (st.served && st.served->job_id == job_id) {
    stop_job(self);
    promise.deliver(node_sharing_report{job_id, st.node_id, {}, {}});
    return;
  }
  if (st.pending_ready && st.pending_job_id == job_id) {
    // Stopped (cancelled, or failed elsewhere) while still loading: never start its actors.
    st.pending_ready->deliver(
      make_error(strom_error::job_cancelled, fmt::format("job {} was stopped", job_id)));
    st.pending_ready.reset();
    st.prepared.reset();
    drop_early_restore(self, make_error(strom_error::job_cancelled,
                                        fmt::format("job {} was stopped", job_id)));
    promise.deliver(node_sharing_report{job_id, st.node_id, {}, {}});
    return;
  }
  if (!st.run || st.run->job_id != job_id) {
    promise.deliver(make_error(strom_error::bad_job,
                               fmt::format("node {} runs no job {}", st.node_id, job_id)));
    return;
  }
  auto answer = std::make_shared<node_sharing_report>();
  answer->job_id = job_id;
  answer->node_id = st.node_id;
  answer->sent = st.run->actors.framer->stats();
  auto figures = node_figures(setup, *st.run);
  // The node is free for its next job at once (a cancel is often followed by a submit): the
  // trainers end now, the relay once it has reported its counts.
  const auto relay = st.run->actors.relay;
  for (const auto& member : st.run->actors.trainers)
    end_actor(self, member);
  self->demonitor(relay);
  st.run.reset();
  st.reporting_relays.push_back(relay);
  const auto reported = [self, relay] {
    auto& relays = self->state.reporting_relays;
    const auto found = std::find(relays.begin(), relays.end(), relay);
    if (found == relays.end())
      return;  // the agent ended it already
    relays.erase(found);
    end_actor(self, relay);
  };
  self->request(relay, setup.timeouts.answer_timeout, stats_atom_v)
    .then(
      [setup, answer, promise, figures, reported](const relay_stats& relayed) mutable {
        answer->relayed = relayed;
        if (setup.metrics) {  // the job's last figures of this node
          figures.relayed = relayed;
          setup.metrics->node(figures);
        }
        promise.deliver(*answer);
        reported();
      },
      [promise, reported](caf::error& err) mutable {
        promise.deliver(err);
        reported();
      });
}

} // namespace

caf::behavior node_agent(caf::stateful_actor<node_agent_state>* self, node_agent_setup setup) {
  self->set_exit_handler([self](const caf::exit_msg& exit) {
    stop_job(self);
    self->quit(exit.reason);
  });
  self->set_down_handler([self, setup](const caf::down_msg& down) {
    auto& st = self->state;
    if (down.source == setup.scheduler.address()) {
      stop_job(self);
      // A scheduler stopped on purpose (its daemon's SIGTERM, the end of a launch) says so
      // with its exit reason; a crash or a broken link reaches this node as another reason.
      if (down.reason == caf::exit_reason::user_shutdown)
        self->quit(make_error(strom_error::scheduler_stopped, "the scheduler shut down"));
      else
        self->quit(make_error(strom_error::scheduler_lost,
                              "lost the scheduler: " + error_text(self->system(), down.reason)));
      return;
    }
    if (give_up_if_from(st.incoming, down,
                        make_error(strom_error::snapshot_failed,
                                   fmt::format("node {}: the snapshot's source went away",
                                               st.node_id)))) {
      st.early.reset();
      return;
    }
    if (is_served_shard(st, down.source)) {
      const auto failure = node_failure{st.served->job_id, st.node_id,
                                        "an actor it serves the job with stopped: "
                                          + error_text(self->system(), down.reason)};
      log::warning("node {}: {}", st.node_id, failure.message);
      self->send(setup.scheduler, failure);
      stop_job(self);
      return;
    }
    if (!st.run)
      return;
    const auto failure = node_failure{st.run->job_id, st.node_id,
                                      "an actor of the node stopped: "
                                        + error_text(self->system(), down.reason)};
    log::warning("node {}: {}", st.node_id, failure.message);
    self->send(setup.scheduler, failure);
    stop_job(self);
  });
  self->request(setup.scheduler, setup.timeouts.join_timeout, setup.identity)
    .then(
      [self, setup](const join_reply& reply) {
        if (setup.observer)
          self->send(setup.observer, reply);
        if (!reply.accepted) {
          self->quit(make_error(strom_error::join_refused,
                                "the scheduler refused the join: " + reply.reason));
          return;
        }
        self->state.node_id = reply.node_id;
        self->state.last_answer = self->clock().now();
        self->monitor(setup.scheduler);
        self->delayed_send(self, setup.timeouts.keepalive_interval, caf::tick_atom_v);
        log::debug("node {}: joined as '{}' with {} worker{}", reply.node_id,
                  setup.identity.name, setup.identity.workers,
                  setup.identity.workers == 1 ? "" : "s");
      },
      [self, setup](caf::error& err) {
        const auto why = "no answer from the scheduler to the join: "
                         + error_text(self->system(), err);
        if (setup.observer)
          self->send(setup.observer, join_reply{false, 0, why});
        self->quit(make_error(strom_error::timeout, why));
      });
  return {
    [](ping_atom) { return pong_atom_v; },
    [self, setup](const job_assignment& assignment) { prepare(self, setup, assignment); },
    [self, setup](const shard_assignment& work) { return serve(self, setup, work); },
    [self, setup](const stage_assignment& work) { return run_stage(self, setup, work); },
    [self](const stage_retire& retire) { retire_stages(self, retire); },
    [self, setup](prepared_atom, const job_assignment& assignment) {
      prepared(self, setup, assignment);
    },
    [self, setup](built_atom, std::uint64_t job_id, std::uint64_t bound) {
      replicas_ready(self, setup, job_id, bound);
    },
    [self, setup](const topology_update& update) { take_update(self, setup, update); },
    [self, setup](wired_atom, std::uint64_t job_id) { wired(self, setup, job_id); },
    [self, setup](const chain_wiring& wiring) { wire_chains(self, setup, wiring); },
    [self](wired_atom, std::uint64_t job_id, std::uint64_t version) {
      chains_wired(self, job_id, version);
    },
    [self, setup](const kv_reroute& reroute) {
      tell_trainers(self, reroute.job_id, reroute);
      reach_new_heads(self, setup, reroute);
    },
    [self, setup](round_plan& plan) { start_round(self, setup, plan); },
    [self](forget_atom, std::uint64_t job_id, std::uint64_t origin) {
      tell_trainers(self, job_id, forget_atom_v, origin);
    },
    [self, setup](snapshot_atom, std::uint64_t job_id, const caf::actor& receiver) {
      return send_snapshot(self, setup, job_id, receiver);
    },
    [self, setup](restore_atom, std::uint64_t job_id, const caf::actor& source) {
      restore(self, setup, job_id, source);
    },
    [self](const snapshot_chunk& chunk) {
      // The assembler remembers a refused chunk and refuses the rest; restore says so.
      if (self->state.incoming)
        static_cast<void>(self->state.incoming->incoming.add(chunk.value));
    },
    [self](cut_atom, std::uint64_t job_id, std::uint32_t round) {
      tell_trainers(self, job_id, cut_atom_v, round);
    },
    [self, setup](evaluate_atom, std::uint64_t job_id, std::uint32_t epoch) {
      evaluate(self, setup, job_id, epoch);
    },
    [self](checked_atom, std::uint64_t job_id, std::uint32_t) { checked(self, job_id); },
    [self, setup](const step_report& step) {
      auto& st = self->state;
      if (!st.run)
        return;
      auto& run = *st.run;
      run.totals.loss_sum += step.loss_sum;
      run.totals.batches += step.batches;
      run.totals.samples += step.samples;
      run.job_totals.loss_sum += step.loss_sum;
      run.job_totals.batches += step.batches;
      run.job_totals.samples += step.samples;
      if (self->clock().now() - run.progress_sent >= setup.timeouts.progress_interval)
        report_progress(self, setup);
    },
    [self, setup](const epoch_report& done) {
      auto& st = self->state;
      if (!st.run)
        return;
      auto& run = *st.run;
      if (done.worker == 0)
        run.iteration = done.iteration;
      if (done.worker < run.steps.size())
        run.steps[done.worker] = done.batches;
      if (++run.epochs_reported == run.actors.trainers.size()
          && run.drained == run.actors.trainers.size())
        end_round(self, setup);
    },
    [self, setup](const drain_report& drained) {
      auto& st = self->state;
      if (!st.run)
        return;
      auto& run = *st.run;
      run.drains.updates_applied += drained.updates_applied;
      run.drains.duplicate_updates_applied += drained.duplicate_updates_applied;
      run.drains.frames_rejected += drained.frames_rejected;
      if (++run.drained == run.actors.trainers.size()
          && run.epochs_reported == run.actors.trainers.size())
        end_round(self, setup);
    },
    [self, setup](stop_atom, std::uint64_t job_id) { stop(self, setup, job_id); },
    [self](stall_atom, std::uint64_t job_id) { tell_activity(self, job_id); },
    [self, setup](caf::tick_atom) { send_keepalive(self, setup); },
    [self, setup](dropped_atom, const std::string& reason) {
      if (self->current_sender() == setup.scheduler.address())
        leave_dropped(self, reason);
    },
  };
}

} // namespace strom::actors
