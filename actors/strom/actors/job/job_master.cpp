#include "strom/actors/job/job_master.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/sharing/job_topology.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace job_steps {

double seconds_between(caf::actor_clock::time_point from, caf::actor_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool in_job(const job_master_state& st, std::uint64_t node_id) {
  return std::find(st.nodes.begin(), st.nodes.end(), node_id) != st.nodes.end();
}

/// Whether a message from a node is about this job while it runs, from one of its nodes.
bool current(const job_master_state& st, std::uint64_t job_id, std::uint64_t node_id) {
  return !st.outcome && st.status.job_id == job_id && in_job(st, node_id);
}

/// Whether `report` comes from one of the running job's nodes about the current round; such a
/// report is word from the nodes for the watchdog.
template <class Report>
bool heard_this_round(self_ptr self, const Report& report) {
  auto& st = self->state;
  if (!current(st, report.job_id, report.node_id) || report.round != st.round)
    return false;
  st.last_heard = self->clock().now();
  return true;
}

template <class Message>
void tell_clients(self_ptr self, const Message& message) {
  for (const auto& client : self->state.clients)
    self->send(client, message);
}

/// The scheduler shows the job's status in `strom status`, membership counts included.
void report_status(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.status.nodes = static_cast<std::uint32_t>(st.nodes.size());
  st.status.nodes_lost = st.report.nodes_lost;
  st.status.nodes_restored = st.report.nodes_restored;
  st.status.nodes_joined = st.report.nodes_joined;
  self->send(setup.scheduler, st.status);
  publish_metrics(self, setup);
}

/// Ends the job master once every node it asked to stop has answered (or could not).
void quit_when_stopped(self_ptr self) {
  auto& st = self->state;
  if (!st.outcome || !st.stopping.empty())
    return;
  if (st.hub)
    self->send_exit(st.hub, caf::exit_reason::user_shutdown);
  if (st.checkpoints.keeper)
    self->send_exit(st.checkpoints.keeper, caf::exit_reason::user_shutdown);
  self->quit();
}

/// Node `node_id` drops the job's actors; the job master ends once it answered.
void stop_on(self_ptr self, const job_master_setup& setup, std::uint64_t node_id,
             const job_agent_actor& agent) {
  auto& st = self->state;
  st.stopping.insert(node_id);
  const auto forget = [self, node_id] {
    self->state.stopping.erase(node_id);
    quit_when_stopped(self);
  };
  request_while_alive(self, st.awaiting, node_id, agent, setup.timeouts.answer_timeout,
                      stop_atom_v, st.status.job_id)
    .then([forget](const node_sharing_report&) { forget(); },
          [forget](caf::error&) { forget(); });
}

/// The job's nodes that are still members drop its actors; the job master ends once they
/// answered (their counts no longer matter).
void stop_on_nodes(self_ptr self, const job_master_setup& setup) {
  for (const auto& [id, node] : self->state.members)
    stop_on(self, setup, id, node.agent);
}

/// Ends the job, successful or not: the scheduler learns the outcome first (for status and
/// late attaches; it frees the nodes then), then the clients. Every stop request to the nodes
/// went out before, so a node handles it before the next job's assignment, which comes later
/// from the same node (the master) and so over the same connection. A job that `restarts`
/// (restarts_after) tells only the scheduler: its clients follow the job's next attempt.
void end_job(self_ptr self, const job_master_setup& setup, job_finished outcome,
             bool restarts = false) {
  auto& st = self->state;
  st.status.state = restarts ? "restarting" : state_of(outcome);
  st.status.failure = outcome.failure;
  report_status(self, setup);
  self->send(setup.scheduler, outcome);
  if (!restarts)
    tell_clients(self, outcome);
  st.outcome = std::move(outcome);
}

/// Samples the epoch in progress trained so far: its recorded rounds', and in a pipeline, of
/// each copy that has not reported its share, its last stage's figures at the latest snapshot.
std::uint64_t samples_this_epoch(const job_master_state& st) {
  auto samples = st.epoch_done.samples;
  if (!st.pipeline)
    return samples;
  const auto& run = *st.pipeline;
  for (std::uint32_t copy = 0; copy < run.reported.size(); ++copy) {
    if (run.reported[copy])
      continue;
    std::uint64_t furthest = 0;
    for (const auto& note : run.taken[copy * run.stages() + run.stages() - 1])
      if (note.at.epoch == st.status.epoch)
        furthest = std::max(furthest, note.samples);
    samples += furthest;
  }
  return samples;
}

/// Whether a job that cannot go on after `reason` starts again from its latest checkpoint
/// instead of failing (torchrun's --max-restarts): it lost a node or an answer from one, the
/// scheduler keeps its checkpoints, and restarts are left.
bool restarts_after(const job_master_setup& setup, const caf::error& reason) {
  const auto code = strom_code_of(reason);
  const bool lost = code == strom_error::node_lost || code == strom_error::peer_lost
                    || code == strom_error::timeout;
  const auto done = setup.resume ? setup.resume->job_restarts : 0u;
  return lost && setup.store && done < setup.submission.max_restarts;
}

/// Ends the job without success (`reason` is a strom_error with the words clients read) and
/// stops it on its nodes. A job that restarts (restarts_after) tells only the scheduler, which
/// starts it again from its checkpoint once this job master ended (scheduler_restart.cpp).
void fail_job(self_ptr self, const job_master_setup& setup, const caf::error& reason) {
  auto& st = self->state;
  if (st.outcome)
    return;
  const auto failure = error_text(self->system(), reason);
  const bool cancelled = strom_code_of(reason) == strom_error::job_cancelled;
  const bool restarts = !cancelled && restarts_after(setup, reason);
  if (cancelled)
    log::info("job_master: job {} cancelled by a client", st.status.job_id);
  else if (restarts)
    log::warning("job_master: job {} cannot go on: {}; it starts again from its latest "
                 "checkpoint (restart {} of {})", st.status.job_id, failure,
                 st.report.job_restarts + 1, setup.submission.max_restarts);
  else
    log::emit(setup.failures_reported ? log::level::debug : log::level::warning,
              "job_master: job {} failed: {}", st.status.job_id, failure);
  stop_on_nodes(self, setup);
  job_finished outcome;
  outcome.job_id = st.status.job_id;
  outcome.cancelled = cancelled;
  outcome.failure = failure;
  outcome.report = st.report;
  if (restarts)  // what this attempt trained, the epoch in progress included (note_restart)
    outcome.report.train_samples += samples_this_epoch(st);
  end_job(self, setup, std::move(outcome), restarts);
  quit_when_stopped(self);
}

/// The strom code for a failed request to a node: a timeout is one, anything else
/// `otherwise` (a node's own code says why it refused, not what the job should do).
strom_error code_for(const caf::error& err, strom_error otherwise) {
  return err == caf::sec::request_timeout ? strom_error::timeout : otherwise;
}

/// Seconds of `span`, for logs and metrics.
double seconds_of(caf::timespan span) { return std::chrono::duration<double>(span).count(); }

/// The live nodes and their trainers, in rank order.
std::vector<node_workers> live_workers(const job_master_state& st) {
  std::vector<node_workers> live;
  for (auto id : st.nodes)
    live.push_back({id, st.prepared.at(id).workers});
  return live;
}

/// Plans round `st.round` for the live nodes and sends each its part: an epoch's partitions
/// of the training set, or (makeup) the samples a round left untrained, split the same way.
void start_round(self_ptr self, bool makeup) {
  auto& st = self->state;
  const auto left = std::move(st.makeup);
  st.makeup.clear();
  st.work = plan_round(live_workers(st), st.round, st.status.epoch, st.data,
                       makeup ? &left : nullptr);
  st.progress.clear();
  st.stall.progressed_at.clear();  // the stall watch counts from the round's start
  st.stall.inquiry.clear();
  st.stall.inquiry_pending = 0;    // answers of an inquiry about the last round are ignored
  st.epoch_reports.clear();
  st.round_running = true;
  st.cut = false;
  st.batches_per_round = 0;
  st.round_started = st.last_heard = self->clock().now();
  plan_shards_round(self);
  for (const auto& [id, work] : st.work) {
    st.batches_per_round += batches_of(work, st.data);
    self->send(st.members.at(id).agent, round_plan{st.status.job_id, st.round, work});
  }
}

void start_epoch(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.epoch_done = {};
  st.epoch_started = self->clock().now();
  if (st.pipeline)
    return start_pipeline_epoch(self, setup);
  next_round(self, setup, false);
}

void publish_progress(self_ptr self) {
  auto& st = self->state;
  step_progress p;
  p.epoch = st.status.epoch + 1;
  p.epochs = st.status.epochs;
  p.batches = st.batches_per_round;
  p.nodes_alive = static_cast<std::uint32_t>(st.nodes.size());
  p.workers = std::max(st.report.workers, 1u);
  double loss_sum = 0.0;
  std::uint64_t samples = 0;
  for (const auto& [id, node] : st.progress) {
    p.batch += node.batches;
    samples += node.samples;
    loss_sum += node.loss_sum;
  }
  p.mean_loss = p.batch ? loss_sum / p.batch : 0.0;
  const double elapsed = seconds_between(st.round_started, self->clock().now());
  p.samples_per_second = samples / std::max(elapsed, 1e-9);
  const double remaining = static_cast<double>(st.data.train_samples)
                             * (p.epochs - st.status.epoch)
                           - static_cast<double>(st.epoch_done.samples + samples);
  p.eta_seconds = remaining / std::max(p.samples_per_second, 1e-9);
  cluster_figures cluster{{}, st.report.nodes_lost, st.report.nodes_restored,
                          st.report.nodes_joined};
  for (const auto& [id, node] : st.progress)
    if (auto member = st.members.find(id); member != st.members.end())
      cluster.nodes.push_back({member->second.status.name, node.job_samples,
                               node.sent.bytes_sent, node.sent.updates, node.sent.density_sum,
                               node.sent.threshold, node.bytes_received});
  tell_clients(self, job_progress{st.status.job_id, p, std::move(cluster)});
}

/// Every node has stopped the job and sent its counts: add the hub's and report.
void count_hub_then_end(self_ptr self, const job_master_setup& setup);

void complete_job(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  auto& r = st.report;
  std::uint64_t updates = 0;
  double density_sum = 0.0;
  std::uint64_t averages = 0;
  for (const auto& [id, node] : st.sharing) {
    r.bytes_sent += node.sent.bytes_sent;
    r.dense_bytes_equivalent += node.sent.dense_bytes_equivalent;
    averages += node.sent.averages;
    r.averaging_bytes += node.relayed.averaging_bytes;
    r.push_bytes += node.sent.push_bytes;
    r.push_dense_bytes += node.sent.push_dense_bytes;
    r.pull_bytes += node.sent.pull_bytes;
    updates += node.sent.updates;
    density_sum += node.sent.density_sum;
    add_tensors(r.sharing_layers, node.sent.tensors);
    r.duplicate_updates_dropped += node.relayed.duplicates_dropped;
    r.frames_rejected += node.relayed.frames_rejected;
  }
  r.mean_density = updates ? density_sum / updates : 0.0;
  // Every node takes part in each average.
  r.averaging_rounds = r.nodes ? averages / r.nodes : 0;
  r.final_threshold = st.sharing[st.nodes.front()].sent.threshold;
  count_shards_then(self, setup, [self, setup] { count_hub_then_end(self, setup); });
}

/// The hub's counts go into the report, and the job ends with success.
void count_hub_then_end(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  self->request(st.hub, setup.timeouts.answer_timeout, stats_atom_v)
    .then(
      [self, setup](const relay_stats& hub) {
        auto& st = self->state;
        if (st.outcome)
          return;
        st.report.duplicate_updates_dropped += hub.duplicates_dropped;
        st.report.frames_rejected += hub.frames_rejected;
        record_run(st.report, seconds_between(st.submitted, self->clock().now()));
        job_finished outcome;
        outcome.job_id = st.status.job_id;
        outcome.succeeded = true;
        outcome.report = st.report;
        for (const auto& [node_id, member] : st.members)  // the servers' shards were counted
          if (member.status.role == node_role_server)
            stop_on(self, setup, node_id, member.agent);
        end_job(self, setup, std::move(outcome));
        quit_when_stopped(self);  // the nodes stopped the job already
      },
      [self, setup](caf::error& err) {
        fail_job(self, setup,
                 make_error(code_for(err, strom_error::node_failed),
                            "the hub relay did not report: " + error_text(self->system(), err)));
      });
}

/// Completes the job once every live node sent its counts.
void complete_when_counted(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (!st.outcome && st.finishing
      && std::all_of(st.nodes.begin(), st.nodes.end(),
                     [&](std::uint64_t id) { return st.sharing.count(id) > 0; }))
    complete_job(self, setup);
}

void finish_job(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.finishing = true;
  const auto job_id = st.status.job_id;
  while (!st.joining.empty())
    drop_joiner(self, setup, st.joining.begin()->first, "the job ended before it was brought in");
  for (auto id : st.nodes) {
    request_while_alive(self, st.awaiting, id, st.members.at(id).agent,
                        setup.timeouts.answer_timeout, stop_atom_v, job_id)
      .then(
        [self, setup](const node_sharing_report& counts) {
          auto& st = self->state;
          if (st.outcome)
            return;
          st.sharing[counts.node_id] = counts;
          complete_when_counted(self, setup);
        },
        [self, setup, id](caf::error& err) {
          if (!in_job(self->state, id))
            return;  // lost meanwhile: member_lost completes without it
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::node_failed),
                              fmt::format("node {} did not report its counts: {}", id,
                                          error_text(self->system(), err))));
        });
  }
}

/// The epoch's last round is done and the evaluator answered: record it, go on or finish.
void end_epoch(self_ptr self, const job_master_setup& setup, const epoch_check& check) {
  auto& st = self->state;
  const auto epoch = st.status.epoch;
  auto& r = st.report;
  r.iterations = st.epoch_reports.count(st.nodes.front()) > 0
                   ? st.epoch_reports[st.nodes.front()].iteration
                   : r.iterations;
  r.checkpoint = check.checkpoint;
  // Counters of the trainers run over the whole job: each node's latest report holds its
  // totals, and a lost node's last ones still count.
  r.updates_applied = st.checkpoints.carried.updates_applied;
  r.duplicate_updates_applied = st.checkpoints.carried.duplicate_updates_applied;
  r.frames_rejected = st.checkpoints.carried.frames_rejected;
  for (const auto& [id, drained] : st.drained) {
    r.updates_applied += drained.updates_applied;
    r.duplicate_updates_applied += drained.duplicate_updates_applied;
    r.frames_rejected += drained.frames_rejected;
  }
  st.epoch_done.seconds = seconds_between(st.epoch_started, st.round_started);
  auto summary = record_epoch(r, epoch, st.epoch_done, check.tested);
  summary.checkpoint = check.checkpoint;
  st.steps_done += st.epoch_done.batches;
  st.epoch_done = {};  // recorded: the figures count it in the report from here
  st.status.epoch = epoch + 1;
  st.status.test_accuracy = summary.test_accuracy;
  report_status(self, setup);
  tell_clients(self, job_epoch{st.status.job_id, summary});
  if (st.status.epoch >= st.status.epochs)
    return finish_job(self, setup);
  ++st.round;
  if (checkpoint_due(st, setup))
    return take_checkpoint(self, setup);
  start_epoch(self, setup);
}

/// Has the first live node evaluate (and checkpoint) the epoch's model; a node lost while it
/// evaluates hands the task to the next.
void evaluate(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto evaluator = st.nodes.front();
  const auto epoch = st.status.epoch;
  st.evaluator = evaluator;
  // Only the answer of the node asked last counts: a lost evaluator's request is given up at
  // its loss (request_while_alive), after lose_member asked the next node.
  const auto asked = [self, evaluator, epoch] {
    auto& st = self->state;
    return !st.outcome && st.status.epoch == epoch && st.evaluator == evaluator;
  };
  request_while_alive(self, st.awaiting, evaluator, st.members.at(evaluator).agent,
                      setup.timeouts.prepare_timeout, evaluate_atom_v, st.status.job_id, epoch)
    .then(
      [self, setup, asked](const epoch_check& check) {
        if (!asked())
          return;
        self->state.evaluator.reset();
        end_epoch(self, setup, check);
      },
      [self, setup, evaluator, epoch, asked](caf::error& err) {
        if (!asked())
          return;
        self->state.evaluator.reset();
        fail_job(self, setup,
                 make_error(code_for(err, strom_error::node_failed),
                            fmt::format("node {} could not evaluate epoch {}: {}", evaluator,
                                        epoch + 1, error_text(self->system(), err))));
      });
}

/// A round ends once every live node reported it and the hub counted every lost node's
/// frames: then a makeup round follows if lost nodes left samples, else the epoch ends. Once:
/// a node lost after the round ended (while the epoch is evaluated) ends nothing again.
void end_round_when_done(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.outcome || st.finishing || !st.round_running || st.forgetting > 0
      || !std::all_of(st.nodes.begin(), st.nodes.end(),
                      [&](std::uint64_t id) { return st.epoch_reports.count(id) > 0; }))
    return;
  st.round_running = false;
  if (st.cut)  // the samples each worker had left when the round was cut short
    for (auto id : st.nodes) {
      const auto left = remainder_of(st.work.at(id), st.epoch_reports.at(id).steps, st.data);
      st.makeup.insert(st.makeup.end(), left.untrained.begin(), left.untrained.end());
    }
  if (!st.makeup.empty()) {
    log::info("job_master: job {} trains the {} samples left of epoch {} in a makeup round",
              st.status.job_id, st.makeup.size(), st.status.epoch + 1);
    ++st.round;
    next_round(self, setup, true);
    return;
  }
  st.round_started = self->clock().now();  // the epoch's training ends here
  evaluate(self, setup);
}

/// The job as a node of rank `rank` with `workers` trainers gets it: every live node is an
/// origin, and the plain topology's hub is its peer (the evaluating node writes checkpoints).
job_assignment assignment_for(const job_master_state& st, const job_master_setup& setup,
                              std::uint32_t rank, std::uint32_t workers,
                              std::uint32_t first_worker, std::uint32_t total_workers) {
  job_assignment a;
  a.job_id = st.status.job_id;
  a.job_text = setup.submission.job_text;
  a.source = setup.submission.source;
  a.checkpoint_dir = setup.submission.checkpoint_dir;
  a.keep_checkpoints = setup.submission.keep_checkpoints;
  a.rank = rank;
  a.workers = workers;
  a.first_worker = first_worker;
  a.total_workers = total_workers;
  a.origins = st.nodes;
  if (st.plan.kind == topology_kind::plain)
    a.hub = caf::actor_cast<caf::actor>(st.hub);
  a.shards = st.kvstore.shards;
  a.server_endpoints = st.kvstore.server_endpoints;
  return a;
}

/// Every node is prepared and every edge of the topology carries frames: the first epoch.
void begin_training(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.status.state = "training";
  report_status(self, setup);
  if (st.status.epoch == 0)
    log::info("job_master: job {} ({}) starts on {} node{}, {} worker{}", st.status.job_id,
              st.status.name, st.nodes.size(), st.nodes.size() == 1 ? "" : "s",
              st.report.workers, st.report.workers == 1 ? "" : "s");
  else
    log::info("job_master: job {} ({}) resumes at epoch {} on {} node{}, {} worker{}",
              st.status.job_id, st.status.name, st.status.epoch + 1, st.nodes.size(),
              st.nodes.size() == 1 ? "" : "s", st.report.workers,
              st.report.workers == 1 ? "" : "s");
  start_epoch(self, setup);
}

void start_when_prepared(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.outcome || !std::all_of(st.nodes.begin(), st.nodes.end(),
                                 [&](std::uint64_t id) { return st.prepared.count(id) > 0; }))
    return;
  const auto attempt = ++st.start_attempt;
  if (!needs_wiring(st.plan))
    return resume_training(self, setup);
  wire_mesh(
    self, setup.timeouts.prepare_timeout,
    [self, setup, attempt] {
      if (self->state.start_attempt != attempt)
        return;
      send_average_trees(self, setup.submission);
      resume_training(self, setup);
    },
    [self, setup, attempt](const caf::error& why) {
      if (self->state.start_attempt == attempt)
        fail_job(self, setup, why);
    });
}

/// A node of the job answered its assignment: once all have, the job starts.
void node_prepared(self_ptr self, const job_master_setup& setup, const node_ready& ready,
                   std::uint64_t node_id) {
  auto& st = self->state;
  auto& prepared = st.prepared[node_id] = ready;
  if (setup.reach_relay)
    prepared.relay = setup.reach_relay(ready.relay);
  if (st.plan.kind == topology_kind::plain)
    self->send(st.hub, add_peer_atom_v, prepared.relay);
  if (st.prepared.size() == 1) {  // the first node to answer (every node reads the same job)
    st.status.name = st.report.job = ready.job_name;
    st.status.epochs = st.report.epochs = ready.epochs;
    st.report.mode = ready.mode;
    st.report.kvstore = ready.kvstore;
    st.report.averaging_frequency = ready.averaging_frequency;
    st.data = data_plan{ready.train_samples, std::max<std::uint32_t>(ready.batch_size, 1),
                        ready.seed, ready.shuffle};
    st.report.device = ready.device;
  } else if (st.report.device.find(ready.device) == std::string::npos) {
    st.report.device += ", " + ready.device;
  }
  st.last_heard = self->clock().now();
  start_when_prepared(self, setup);
}

void assign(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  std::uint32_t total_workers = 0;
  for (const auto& node : setup.nodes)
    total_workers += node.status.workers;
  st.report.nodes = static_cast<std::uint32_t>(setup.nodes.size());
  st.report.workers = total_workers;
  const auto job_id = st.status.job_id;
  std::uint32_t first_worker = 0;
  for (std::uint32_t rank = 0; rank < setup.nodes.size(); ++rank) {
    const auto& node = setup.nodes[rank];
    auto a = assignment_for(st, setup, rank, node.status.workers, first_worker, total_workers);
    first_worker += node.status.workers;
    const auto node_id = node.status.node_id;
    request_while_alive(self, st.awaiting, node_id, node.agent, setup.timeouts.prepare_timeout,
                        std::move(a))
      .then(
        [self, setup, job_id, node_id](const node_ready& ready) {
          if (current(self->state, job_id, node_id))
            node_prepared(self, setup, ready, node_id);
        },
        [self, setup, job_id, node_id](caf::error& err) {
          if (current(self->state, job_id, node_id))
            fail_job(self, setup,
                     make_error(code_for(err, strom_error::bad_job),
                                fmt::format("node {} did not prepare the job: {}", node_id,
                                            error_text(self->system(), err))));
        });
  }
}

/// A client follows the job: progress, epochs and the end (at once when it has ended).
submit_reply attach(self_ptr self, std::uint64_t job_id) {
  auto& st = self->state;
  if (job_id != st.status.job_id)
    return {false, job_id, fmt::format("job master {} runs no job {}", st.status.job_id, job_id)};
  auto client = caf::actor_cast<job_client_actor>(self->current_sender());
  if (!client)
    return {true, job_id, {}};
  if (st.status.state == "restarting") {
    // The scheduler keeps the client for the job's restart.
  } else if (st.outcome) {
    self->send(client, *st.outcome);
  } else {
    self->monitor(client);
    st.clients.push_back(client);
  }
  return {true, job_id, {}};
}

submit_reply cancel(self_ptr self, const job_master_setup& setup, std::uint64_t job_id) {
  auto& st = self->state;
  if (job_id != st.status.job_id)
    return {false, job_id, fmt::format("job master {} runs no job {}", st.status.job_id, job_id)};
  if (st.outcome)
    return {false, job_id,
            fmt::format("job {} has already ended ({})", job_id, state_of(*st.outcome))};
  fail_job(self, setup, make_error(strom_error::job_cancelled, "cancelled by a client"));
  return {true, job_id, {}};
}

/// The scheduler lost one of the job's nodes: a joiner, a node of the running or preparing job
/// (which goes on without it), or one of a job that has ended.
void handle_loss(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  if (st.stopping.erase(lost.node_id) > 0)
    quit_when_stopped(self);
  if (st.joining.erase(lost.node_id) > 0) {
    st.members.erase(lost.node_id);
    st.prepared.erase(lost.node_id);
    return;
  }
  if (!st.outcome && is_server(st, lost.node_id)) {
    st.members.erase(lost.node_id);
    return lose_server(self, setup, lost);
  }
  if (st.outcome || !in_job(st, lost.node_id)) {
    st.members.erase(lost.node_id);
    return;
  }
  forget_on_shards(self, lost.node_id);
  if (st.pipeline)
    return restore_stage(self, setup, lost);
  if (st.status.state == "preparing")
    return lose_while_preparing(self, setup, lost);
  lose_member(self, setup, lost);
}

} // namespace job_steps

using namespace job_steps;

caf::timespan rejoin_timeout_of(const job_submission& submission, const timing& timeouts) {
  const auto ms = submission.rejoin_timeout_ms;
  return ms > 0 ? caf::timespan{std::chrono::milliseconds(ms)} : timeouts.rejoin_timeout;
}

const char* state_of(const job_finished& outcome) {
  return outcome.succeeded ? "succeeded" : outcome.cancelled ? "cancelled" : "failed";
}

caf::behavior job_master(caf::stateful_actor<job_master_state>* self, job_master_setup setup) {
  auto& st = self->state;
  st.status.job_id = setup.job_id;
  st.status.state = "preparing";
  st.submitted = st.last_heard = self->clock().now();
  for (const auto& node : setup.nodes) {
    st.nodes.push_back(node.status.node_id);
    st.members.emplace(node.status.node_id, node);
  }
  // Plain: every node sends to the hub on the master, which passes frames on. Mesh: the
  // nodes' relays form a tree, wired once all are prepared (job_topology.hpp); the hub
  // then carries nothing.
  st.plan = plan_for(setup.submission, st.nodes);
  if (setup.submission.averaging && setup.submission.topology != "mesh")
    log::info("job_master: job {} averages parameters along a mesh of fanout {} (its topology "
              "'{}' is for shared updates)",
              setup.job_id, st.plan.fanout, setup.submission.topology);
  st.report.topology = summary_of(st.plan, st.nodes.size());
  st.status.topology = status_line_of(st.plan);
  for (const auto& client : setup.clients)
    if (client) {
      self->monitor(client);
      st.clients.push_back(client);
    }
  st.hub = caf::actor_cast<hub_actor>(self->spawn<caf::linked>(relay));
  if (keeps_checkpoints(setup))
    start_keeping(self, setup);
  // The hub and the keeper end with the job (quit_when_stopped); their ends must not end it.
  self->set_exit_handler([self](const caf::exit_msg& exit) {
    const auto& st = self->state;
    if (exit.source == st.hub.address() || exit.source == st.checkpoints.keeper.address()
        || !exit.reason)
      return;
    self->quit(exit.reason);
  });
  self->set_down_handler([self](const caf::down_msg& down) {
    auto& clients = self->state.clients;
    const auto gone = [&](const job_client_actor& c) { return c.address() == down.source; };
    clients.erase(std::remove_if(clients.begin(), clients.end(), gone), clients.end());
  });
  for (const auto& server : setup.servers)
    st.members.emplace(server.status.node_id, server);
  place_then_start(self, setup);
  self->delayed_send(self, setup.timeouts.silence_limit, watchdog_atom_v, setup.job_id);
  watch_stalls(self, setup);
  return {
    [self, setup](stall_atom, std::uint64_t job_id) {
      if (job_id == self->state.status.job_id)
        watch_stalls(self, setup);
    },
    [self, setup](const node_progress& progress) {
      if (!heard_this_round(self, progress))
        return;
      note_progress(self, progress);
      self->state.progress[progress.node_id] = progress;
      publish_progress(self);
      publish_metrics(self, setup);
    },
    [self, setup](const node_epoch_report& report) {
      if (!heard_this_round(self, report))
        return;
      auto& st = self->state;
      st.epoch_reports[report.node_id] = report;
      st.drained[report.node_id] = report.drained;
      st.epoch_done.loss_sum += report.totals.loss_sum;
      st.epoch_done.batches += report.totals.batches;
      st.epoch_done.samples += report.totals.samples;
      end_round_when_done(self, setup);
    },
    [self, setup](const node_failure& failure) {
      auto& st = self->state;
      const bool from_server = !st.outcome && failure.job_id == st.status.job_id
                               && is_server(st, failure.node_id);
      if (!from_server && !current(st, failure.job_id, failure.node_id))
        return;
      fail_job(self, setup,
               make_error(strom_error::node_failed,
                          fmt::format("{}: {}", describe(st.members.at(failure.node_id).status),
                                      failure.message)));
    },
    [self, setup](const member_joined& joined) {
      return joined.node.role == node_role_server ? take_server(self, setup, joined)
                                                  : take_joiner(self, setup, joined);
    },
    [self, setup](const stage_epoch_end& ended) { pipeline_epoch_ended(self, setup, ended); },
    [self](const stage_snapshot_note& note) { pipeline_snapshot_held(self, note); },
    [self, setup](rejoin_atom, std::uint64_t job_id, std::uint32_t round) {
      auto& st = self->state;
      if (st.outcome || !st.paused || job_id != st.status.job_id || round != st.round)
        return;
      fail_job(self, setup,
               make_error(strom_error::node_lost,
                          fmt::format("no nodes joined within {:.0f} s to bring the job back to "
                                      "the {} it needs; {} left, lost: {}",
                                      seconds_of(rejoin_timeout(setup)),
                                      min_nodes(setup), st.nodes.size(),
                                      fmt::join(st.lost, ", "))));
    },
    [self, setup](const member_lost& lost) {
      handle_loss(self, setup, lost);
      // Its requests' error handlers run next, once the state no longer counts the node.
      self->state.awaiting.give_up(self, lost.node_id, error_text(self->system(), lost.reason));
    },
    [self](attach_atom, std::uint64_t job_id) { return attach(self, job_id); },
    [self, setup](cancel_atom, std::uint64_t job_id) { return cancel(self, setup, job_id); },
    [self, setup](watchdog_atom, std::uint64_t job_id) {
      auto& st = self->state;
      if (st.outcome || job_id != st.status.job_id)
        return;
      const auto quiet = self->clock().now() - st.last_heard;
      if (quiet >= setup.timeouts.silence_limit)
        return fail_job(self, setup,
                        make_error(strom_error::timeout,
                                   fmt::format("no word from the job's nodes for {} s",
                                               std::chrono::duration_cast<std::chrono::seconds>(
                                                 quiet).count())));
      self->delayed_send(self, setup.timeouts.silence_limit - quiet, watchdog_atom_v, job_id);
    },
  };
}

} // namespace strom::actors
