#include "strom/actors/job_master.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/checkpoint_keeper.hpp"
#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/job_topology.hpp"
#include "strom/actors/relay.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

using self_ptr = caf::stateful_actor<job_master_state>*;

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

void tell_clients(self_ptr self, const caf::message& msg) {
  for (const auto& client : self->state.clients)
    self->send(client, msg);
}

/// The scheduler shows the job's status in `strom status`, membership counts included.
void report_status(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.status.nodes = static_cast<std::uint32_t>(st.nodes.size());
  st.status.nodes_lost = st.report.nodes_lost;
  st.status.nodes_restored = st.report.nodes_restored;
  st.status.nodes_joined = st.report.nodes_joined;
  self->send(setup.scheduler, st.status);
}

/// Ends the job master once every node it asked to stop has answered (or could not).
void quit_when_stopped(self_ptr self) {
  auto& st = self->state;
  if (!st.outcome || !st.stopping.empty())
    return;
  for (const auto& helper : {st.hub, st.keeper})
    if (helper)
      self->send_exit(helper, caf::exit_reason::user_shutdown);
  self->quit();
}

/// The job's nodes that are still members drop its actors; the job master ends once they
/// answered (their counts no longer matter).
void stop_on_nodes(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto job_id = st.status.job_id;
  for (const auto& [id, node] : st.members) {
    st.stopping.insert(id);
    const auto node_id = id;
    self->request(node.agent, setup.timeouts.answer_timeout, stop_atom_v, job_id)
      .then(
        [self, node_id](const node_sharing_report&) {
          self->state.stopping.erase(node_id);
          quit_when_stopped(self);
        },
        [self, node_id](caf::error&) {
          self->state.stopping.erase(node_id);
          quit_when_stopped(self);
        });
  }
}

/// Ends the job, successful or not: the scheduler learns the outcome first (for status and
/// late attaches; it frees the nodes then), then the clients. Every stop request to the nodes
/// went out before, so a node handles it before the next job's assignment, which comes later
/// from the same node (the master) and so over the same connection.
void end_job(self_ptr self, const job_master_setup& setup, job_finished outcome) {
  auto& st = self->state;
  st.status.state = state_of(outcome);
  st.status.failure = outcome.failure;
  report_status(self, setup);
  self->send(setup.scheduler, outcome);
  tell_clients(self, caf::make_message(outcome));
  st.outcome = std::move(outcome);
}

/// Ends the job without success (`reason` is a strom_error with the words clients read) and
/// stops it on its nodes.
void fail_job(self_ptr self, const job_master_setup& setup, const caf::error& reason) {
  auto& st = self->state;
  if (st.outcome)
    return;
  const auto failure = error_text(self->system(), reason);
  const bool cancelled = strom_code_of(reason) == strom_error::job_cancelled;
  if (cancelled)
    log::info("job_master: job {} cancelled by a client", st.status.job_id);
  else
    log::warning("job_master: job {} failed: {}", st.status.job_id, failure);
  stop_on_nodes(self, setup);
  job_finished outcome;
  outcome.job_id = st.status.job_id;
  outcome.cancelled = cancelled;
  outcome.failure = failure;
  outcome.report = st.report;
  end_job(self, setup, std::move(outcome));
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
  st.epoch_reports.clear();
  st.round_running = true;
  st.cut = false;
  st.batches_per_round = 0;
  st.round_started = st.last_heard = self->clock().now();
  for (const auto& [id, work] : st.work) {
    st.batches_per_round += batches_of(work, st.data);
    self->send(st.members.at(id).agent, round_plan{st.status.job_id, st.round, work});
  }
}

void next_round(self_ptr self, const job_master_setup& setup, bool makeup);
void remap_without(job_master_state& st, std::uint64_t node);

void start_epoch(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.epoch_done = {};
  st.epoch_started = self->clock().now();
  next_round(self, setup, false);
}

void publish_progress(self_ptr self) {
  auto& st = self->state;
  step_progress p;
  p.epoch = st.status.epoch + 1;
  p.epochs = st.status.epochs;
  p.batches = st.batches_per_round;
  p.nodes_alive = static_cast<std::uint32_t>(st.nodes.size());
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
  tell_clients(self, caf::make_message(job_progress{st.status.job_id, p}));
}

/// Every node has stopped the job and sent its counts: add the hub's and report.
void complete_job(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  auto& r = st.report;
  std::uint64_t updates = 0;
  double density_sum = 0.0;
  for (const auto& [id, node] : st.sharing) {
    r.bytes_sent += node.sent.bytes_sent;
    r.dense_bytes_equivalent += node.sent.dense_bytes_equivalent;
    updates += node.sent.updates;
    density_sum += node.sent.density_sum;
    r.duplicate_updates_dropped += node.relayed.duplicates_dropped;
    r.frames_rejected += node.relayed.frames_rejected;
  }
  r.mean_density = updates ? density_sum / updates : 0.0;
  r.final_threshold = st.sharing[st.nodes.front()].sent.threshold;
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
        end_job(self, setup, std::move(outcome));
        quit_when_stopped(self);  // the nodes stopped the job already
      },
      [self, setup](caf::error& err) {
        fail_job(self, setup,
                 make_error(code_for(err, strom_error::node_failed),
                            "the hub relay did not report: " + error_text(self->system(), err)));
      });
}

/// Lets a joining node go: its job actors stop, and the scheduler frees it.
void drop_joiner(self_ptr self, const job_master_setup& setup, std::uint64_t node,
                 const std::string& why) {
  auto& st = self->state;
  const auto joiner = st.joining.find(node);
  if (joiner == st.joining.end())
    return;
  log::warning("job_master: job {} lets {} go: {}", st.status.job_id,
               describe(joiner->second.node.status), why);
  // Asked, not told: the node answers a stop with its counts, which must not arrive here as
  // an unexpected message (CAF would answer the node with an error that ends its agent).
  self->request(joiner->second.node.agent, setup.timeouts.answer_timeout, stop_atom_v,
                st.status.job_id)
    .then([](const node_sharing_report&) {}, [](caf::error&) {});
  self->send(setup.scheduler, forget_atom_v, st.status.job_id, node);
  st.joining.erase(joiner);
  st.members.erase(node);
  st.prepared.erase(node);
  if (st.plan.links.count(node) > 0)  // a mesh joiner wired before its snapshot
    remap_without(st, node);
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
    self->request(st.members.at(id).agent, setup.timeouts.answer_timeout, stop_atom_v, job_id)
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

/// Whether the epoch that just ended is one to checkpoint (--checkpoint-every).
bool checkpoint_due(const job_master_state& st, const job_master_setup& setup) {
  return st.keeper && st.report.iterations >= st.checkpointed_iteration + setup.checkpoint_every;
}

/// Between two epochs, while nothing trains: the keeper saves the first live node's snapshot
/// and the scheduler the job's progress; then the next epoch starts. A checkpoint that fails
/// is logged and training goes on: the job is no worse off than without a state directory.
void take_checkpoint(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto epoch = st.status.epoch;
  self->request(st.keeper, setup.timeouts.restore_timeout, checkpoint_atom_v, st.status.job_id,
                st.members.at(st.nodes.front()).agent)
    .then(
      [self, setup, epoch](const snapshot_sent& sent) {
        auto& st = self->state;
        if (st.outcome)
          return;
        st.checkpointed_iteration = st.report.iterations;
        self->send(setup.scheduler, job_checkpointed{st.status.job_id, epoch, st.report});
        log::info("job_master: job {} checkpointed after epoch {} ({} bytes)", st.status.job_id,
                  epoch, sent.bytes);
        start_epoch(self, setup);
      },
      [self, setup, epoch](caf::error& err) {
        auto& st = self->state;
        if (st.outcome)
          return;
        log::warning("job_master: job {} took no checkpoint after epoch {}: {}",
                     st.status.job_id, epoch, error_text(self->system(), err));
        start_epoch(self, setup);
      });
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
  r.updates_applied = st.carried.updates_applied;
  r.duplicate_updates_applied = st.carried.duplicate_updates_applied;
  r.frames_rejected = st.carried.frames_rejected;
  for (const auto& [id, drained] : st.drained) {
    r.updates_applied += drained.updates_applied;
    r.duplicate_updates_applied += drained.duplicate_updates_applied;
    r.frames_rejected += drained.frames_rejected;
  }
  st.epoch_done.seconds = seconds_between(st.epoch_started, st.round_started);
  const auto summary = record_epoch(r, epoch, st.epoch_done, check.tested);
  st.status.epoch = epoch + 1;
  st.status.test_accuracy = summary.test_accuracy;
  report_status(self, setup);
  tell_clients(self, caf::make_message(job_epoch{st.status.job_id, summary}));
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
  // Only the answer of the node asked last counts: a lost evaluator's request is given up
  // at its loss (lose_member asks the next node), not at its timeout, which is minutes.
  const auto asked = [self, evaluator, epoch] {
    auto& st = self->state;
    return !st.outcome && st.status.epoch == epoch && st.evaluator == evaluator;
  };
  self->request(st.members.at(evaluator).agent, setup.timeouts.prepare_timeout, evaluate_atom_v,
                st.status.job_id, epoch)
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

/// The samples of `node`'s workers in this round that the hub did not pass on a frame for
/// go to the makeup round; those it did count as trained.
void take_over_share(self_ptr self, std::uint64_t node, const origin_frames& passed) {
  auto& st = self->state;
  const auto work = st.work.find(node);
  if (work == st.work.end() || (passed.round == st.round && passed.drained))
    return;  // its round is complete
  const auto left = remainder_of(work->second,
                                 passed.round == st.round ? passed.frames
                                                          : std::vector<std::uint64_t>{},
                                 st.data);
  st.makeup.insert(st.makeup.end(), left.untrained.begin(), left.untrained.end());
  st.epoch_done.samples += left.trained_samples;
  st.epoch_done.batches += left.trained_batches;
  if (const auto seen = st.progress.find(node); seen != st.progress.end())
    st.report.samples_redone += seen->second.samples > left.trained_samples
                                  ? seen->second.samples - left.trained_samples
                                  : 0;
}

/// The topology without `node`; the root too can go (the hub is the master's, not the root's).
void remap_without(job_master_state& st, std::uint64_t node) {
  const auto version = st.plan.version + 1;
  if (auto remapped = without_node(st.plan, node))
    st.plan = std::move(*remapped);
  else if (auto replanned =
             plan_topology(st.nodes, topology_options{st.plan.kind, st.plan.fanout})) {
    st.plan = std::move(*replanned);
    st.plan.version = version;
  }
  st.report.topology.version = st.plan.version;
  st.status.topology = status_line_of(st.plan);
}

/// A node of the running job left the cluster: the job goes on without it (see the header).
void lose_member(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  const auto node = lost.node_id;
  const auto described = describe(st.members.at(node).status);
  st.members.erase(node);
  st.nodes.erase(std::find(st.nodes.begin(), st.nodes.end(), node));
  st.lost.push_back(error_text(self->system(), lost.reason));
  auto& r = st.report;
  ++r.nodes_lost;
  r.failure_detection_seconds = std::max(r.failure_detection_seconds, lost.silent_seconds);
  const auto before = st.plan;
  remap_without(st, node);
  if (st.nodes.empty())
    return fail_job(self, setup,
                    make_error(strom_error::node_lost,
                               fmt::format("every node of the job was lost: {}",
                                           fmt::join(st.lost, ", "))));
  log::warning("job_master: job {} goes on with {} nodes after losing {} ({:.2f} s after its "
               "last sign of life; topology version {}): {}",
               st.status.job_id, st.nodes.size(), described, lost.silent_seconds,
               st.plan.version, error_text(self->system(), lost.reason));
  report_status(self, setup);
  if (st.finishing)
    return complete_when_counted(self, setup);
  if (st.evaluator == node)  // its answer will never come: the next live node evaluates
    evaluate(self, setup);
  for (auto id : st.nodes)
    self->send(st.members.at(id).agent, forget_atom_v, st.status.job_id, node);
  // A node that reported the round before it was lost completed it; its totals counted.
  const bool reported = st.epoch_reports.count(node) > 0;
  ++st.forgetting;
  const auto relay = st.prepared.at(node).relay;
  const auto counted = [self, setup, node, reported](const origin_frames& passed) {
    auto& st = self->state;
    --st.forgetting;
    if (!reported)
      take_over_share(self, node, passed);
    end_round_when_done(self, setup);
  };
  const auto failed = [self, setup](const caf::error& why) {
    --self->state.forgetting;
    fail_job(self, setup, why);
  };
  if (st.plan.kind == topology_kind::mesh)
    return repair_mesh(self, setup.timeouts, node, relay, before, counted, failed);
  self->request(st.hub, setup.timeouts.answer_timeout, forget_atom_v, node, relay)
    .then(counted, [self, failed](caf::error& err) {
      failed(make_error(code_for(err, strom_error::node_failed),
                        "the hub relay did not count a lost node's frames: "
                          + error_text(self->system(), err)));
    });
}

/// Live nodes the job needs to train (--min-nodes; at least one).
std::size_t min_nodes(const job_master_setup& setup) {
  return std::max<std::size_t>(setup.submission.min_nodes, 1);
}

/// Nodes the job may grow to (--max-nodes; by default --nodes when given, else no bound).
std::size_t max_nodes(const job_master_setup& setup) {
  const auto& job = setup.submission;
  if (job.max_nodes > 0)
    return job.max_nodes;
  return job.nodes > 0 ? job.nodes : std::numeric_limits<std::size_t>::max();
}

/// How long this job waits for nodes when it pauses.
caf::timespan rejoin_timeout(const job_master_setup& setup) {
  return rejoin_timeout_of(setup.submission, setup.timeouts);
}

std::size_t ready_joiners(const job_master_state& st) {
  return static_cast<std::size_t>(std::count_if(st.joining.begin(), st.joining.end(),
                                                [](const auto& j) { return j.second.ready; }));
}

/// A joiner restored: it trains from the next round on.
void bring_in(self_ptr self, const job_master_setup& setup, std::uint64_t node) {
  auto& st = self->state;
  auto& joiner = st.joining.at(node);
  auto& r = st.report;
  const bool replaces = r.nodes_lost > r.nodes_restored;
  ++(replaces ? r.nodes_restored : r.nodes_joined);
  const double took = seconds_between(joiner.joined, self->clock().now());
  r.restore_seconds = std::max(r.restore_seconds, took);
  st.nodes.push_back(node);
  if (st.plan.kind == topology_kind::plain)
    self->send(st.hub, add_peer_atom_v, st.prepared.at(node).relay);
  if (st.plan.links.count(node) == 0)  // a mesh joiner hangs in the plan already
    if (auto grown = with_node(st.plan, node))
      st.plan = std::move(*grown);
  r.topology.version = st.plan.version;
  r.topology.max_links =
    std::max(r.topology.max_links, summary_of(st.plan, st.nodes.size()).max_links);
  st.status.topology = status_line_of(st.plan);
  log::info("job_master: job {} {} {} {:.2f} s after it joined; {} nodes train from round {}",
            st.status.job_id, replaces ? "restored" : "grew by", describe(joiner.node.status),
            took, st.nodes.size(), st.round);
  st.joining.erase(node);
  report_status(self, setup);
}

/// `receivers` (ready joiners) take a live node's snapshot; then the round starts with them.
/// Those whose source was lost meanwhile take the next live node's.
void take_snapshots(self_ptr self, const job_master_setup& setup, bool makeup,
                    std::vector<std::uint64_t> receivers) {
  auto& st = self->state;
  const auto source_node = st.nodes.front();
  const auto source = st.members.at(source_node).agent;
  // A joiner let go while it was wired takes none.
  receivers.erase(std::remove_if(receivers.begin(), receivers.end(),
                                 [&](std::uint64_t node) { return !st.joining.count(node); }),
                  receivers.end());
  if (receivers.empty()) {
    st.restoring = 0;
    return start_round(self, makeup);
  }
  auto failed = std::make_shared<std::set<std::uint64_t>>();
  auto again = std::make_shared<std::vector<std::uint64_t>>();
  auto done = [self, setup, makeup, failed, again, receivers] {
    auto& st = self->state;
    if (--st.restoring > 0 || st.outcome)
      return;
    for (auto node : receivers) {
      if (failed->count(node) > 0)
        drop_joiner(self, setup, node, "it could not take a snapshot");
      else if (st.joining.count(node) > 0
               && std::find(again->begin(), again->end(), node) == again->end())
        bring_in(self, setup, node);  // restored, and not lost meanwhile
    }
    if (!again->empty() && !st.nodes.empty()) {
      st.restoring = static_cast<std::uint32_t>(again->size());
      return take_snapshots(self, setup, makeup, *again);
    }
    start_round(self, makeup);
  };
  st.restoring = static_cast<std::uint32_t>(receivers.size());
  for (auto node : receivers)
    self->request(st.members.at(node).agent, setup.timeouts.restore_timeout, restore_atom_v,
                  st.status.job_id, source)
      .then([done](const snapshot_sent&) { done(); },
            [self, done, failed, again, node, source_node](caf::error& err) {
              const bool source_lost = !in_job(self->state, source_node);
              log::warning("job_master: node {} took no snapshot{}: {}", node,
                           source_lost ? " (its source was lost; it takes another)" : "",
                           error_text(self->system(), err));
              if (source_lost)
                again->push_back(node);
              else
                failed->insert(node);
              done();
            });
}

/// Mesh: each joiner hangs under the node nearest the root with room and is wired to it
/// before its snapshot, so the next round's frames reach it (nothing trains meanwhile, so
/// nothing is resent); one that cannot be wired is let go.
void wire_joiners(self_ptr self, const job_master_setup& setup,
                  const std::vector<std::uint64_t>& joiners, std::function<void()> then) {
  auto& st = self->state;
  for (auto node : joiners)
    if (auto grown = with_node(st.plan, node))
      st.plan = std::move(*grown);
  st.report.topology.version = st.plan.version;
  wire_children(self, setup.timeouts.prepare_timeout, joiners, false, then,
                [self, setup, joiners, then](const caf::error& why) {
                  for (auto node : joiners)
                    drop_joiner(self, setup, node,
                                "it could not join the mesh: " + error_text(self->system(), why));
                  then();
                });
}

/// Every ready joiner takes a live node's snapshot (its first trainer's), in a mesh once it is
/// wired; then the round starts with them. Nothing trains meanwhile, so no frame is newer
/// than the snapshot.
void restore_joiners(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  std::vector<std::uint64_t> receivers;
  for (const auto& [id, joiner] : st.joining)
    if (joiner.ready)
      receivers.push_back(id);
  st.restoring = static_cast<std::uint32_t>(receivers.size());
  if (st.plan.kind != topology_kind::mesh)
    return take_snapshots(self, setup, makeup, std::move(receivers));
  wire_joiners(self, setup, receivers, [self, setup, makeup, receivers] {
    if (!self->state.outcome)
      take_snapshots(self, setup, makeup, receivers);
  });
}

/// Pauses the job between rounds until enough nodes joined, failing it after the rejoin
/// timeout.
void pause(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  st.paused = makeup;
  log::warning("job_master: job {} pauses with {} of the {} nodes it needs; it fails unless "
               "enough join within {:.0f} s",
               st.status.job_id, st.nodes.size(), min_nodes(setup),
               seconds_of(rejoin_timeout(setup)));
  self->delayed_send(self, rejoin_timeout(setup), rejoin_atom_v, st.status.job_id,
                     st.round);
}

/// Starts the next round: paused below the minimum of nodes, after the ready joiners took a
/// snapshot when there are any.
void next_round(self_ptr self, const job_master_setup& setup, bool makeup) {
  auto& st = self->state;
  if (st.nodes.size() + ready_joiners(st) < min_nodes(setup))
    return pause(self, setup, makeup);
  if (ready_joiners(st) > 0)
    return restore_joiners(self, setup, makeup);
  start_round(self, makeup);
}

/// A joiner's actors run: a running round is cut short so it trains soon, and a paused job
/// may go on.
void joiner_ready(self_ptr self, const job_master_setup& setup, const node_ready& ready) {
  auto& st = self->state;
  st.prepared[ready.node_id] = ready;
  st.joining.at(ready.node_id).ready = true;
  if (st.round_running && !st.cut && st.restoring == 0) {
    st.cut = true;
    for (auto id : st.nodes)
      self->send(st.members.at(id).agent, cut_atom_v, st.status.job_id, st.round);
  } else if (st.paused && st.restoring == 0) {
    const bool makeup = *st.paused;
    st.paused.reset();
    next_round(self, setup, makeup);
  }
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
  a.rank = rank;
  a.workers = workers;
  a.first_worker = first_worker;
  a.total_workers = total_workers;
  a.origins = st.nodes;
  a.hub = st.plan.kind == topology_kind::plain ? st.hub : caf::actor{};
  return a;
}

/// Assigns the job to a node that joined: it loads the data and builds its actors meanwhile.
bool take_joiner(self_ptr self, const job_master_setup& setup, const member_joined& joined) {
  auto& st = self->state;
  const auto node = joined.node.node_id;
  if (st.outcome || st.finishing || st.status.state != "training"
      || st.nodes.size() + st.joining.size() >= max_nodes(setup) || st.members.count(node) > 0)
    return false;
  st.members[node] = job_node{joined.node, joined.agent};
  st.joining[node] = job_joiner{{joined.node, joined.agent}, self->clock().now(), false};
  // Rounds assign the data: its worker ranks here only pass the node's own checks.
  auto a = assignment_for(st, setup, static_cast<std::uint32_t>(st.nodes.size()),
                          joined.node.workers, 0, joined.node.workers);
  a.origins.push_back(node);
  const auto job_id = st.status.job_id;
  self->request(joined.agent, setup.timeouts.prepare_timeout, std::move(a))
    .then(
      [self, setup, job_id, node](const node_ready& ready) {
        if (!self->state.outcome && self->state.joining.count(node) > 0)
          joiner_ready(self, setup, ready);
      },
      [self, setup, node](caf::error& err) {
        drop_joiner(self, setup, node,
                    "it did not prepare the job: " + error_text(self->system(), err));
      });
  log::info("job_master: job {} takes {}, which joined (membership epoch {})", job_id,
            describe(joined.node), joined.membership_epoch);
  return true;
}

/// Every node is prepared and every edge of the topology carries frames: the first epoch.
void begin_training(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.status.state = "training";
  report_status(self, setup);
  if (st.status.epoch == 0)
    log::info("job_master: job {} ({}) starts on {} nodes, {} workers", st.status.job_id,
              st.status.name, st.nodes.size(), st.report.workers);
  else
    log::info("job_master: job {} ({}) resumes at epoch {} on {} nodes, {} workers",
              st.status.job_id, st.status.name, st.status.epoch + 1, st.nodes.size(),
              st.report.workers);
  start_epoch(self, setup);
}

/// A job resumed after the scheduler's restart: every node takes the checkpoint from the
/// keeper (the way a joiner takes a live node's snapshot), then training goes on where the
/// checkpoint left it. Without a checkpoint the job starts over.
void resume_training(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.status.epoch == 0)
    return begin_training(self, setup);
  auto pending = std::make_shared<std::size_t>(st.nodes.size());
  for (auto id : st.nodes)
    self->request(st.members.at(id).agent, setup.timeouts.restore_timeout, restore_atom_v,
                  st.status.job_id, st.keeper)
      .then(
        [self, setup, pending](const snapshot_sent&) {
          if (--*pending == 0 && !self->state.outcome)
            begin_training(self, setup);
        },
        [self, setup, id](caf::error& err) {
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::snapshot_failed),
                              fmt::format("node {} could not take the job's checkpoint: {}", id,
                                          error_text(self->system(), err))));
        });
}

/// A node of the job answered its assignment: once all have, the first epoch starts.
void node_prepared(self_ptr self, const job_master_setup& setup, const node_ready& ready,
                   std::uint64_t node_id) {
  auto& st = self->state;
  if (st.plan.kind == topology_kind::plain)
    self->send(st.hub, add_peer_atom_v, ready.relay);
  st.prepared[node_id] = ready;
  if (node_id == st.nodes.front()) {
    st.status.name = st.report.job = ready.job_name;
    st.status.epochs = st.report.epochs = ready.epochs;
    st.data = data_plan{ready.train_samples, std::max<std::uint32_t>(ready.batch_size, 1),
                        ready.seed, ready.shuffle};
  }
  st.last_heard = self->clock().now();
  if (st.prepared.size() < st.nodes.size())
    return;
  if (!needs_wiring(st.plan))
    return resume_training(self, setup);
  wire_mesh(self, setup.timeouts.prepare_timeout, [self, setup] { resume_training(self, setup); },
            [self, setup](const caf::error& why) { fail_job(self, setup, why); });
}

/// Sends every node its assignment: rank, global worker ranks, the hub.
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
    self->request(node.agent, setup.timeouts.prepare_timeout, std::move(a))
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
  auto client = caf::actor_cast<caf::actor>(self->current_sender());
  if (!client)
    return {true, job_id, {}};
  if (st.outcome) {
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

/// A job resumed after the scheduler's restart goes on from `saved`: its report, its epochs
/// done, and the run's wall time so far.
void take_up(self_ptr self, const saved_job& saved) {
  auto& st = self->state;
  st.carried = st.report = saved.report;
  st.report.topology = summary_of(st.plan, st.nodes.size());
  st.status.epoch = saved.epochs_done;
  st.checkpointed_iteration = st.report.iterations;
  st.submitted -= std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(saved.report.wall_seconds));
}

/// Spawns the job's checkpoint keeper, which serves a resumed job's checkpoint first.
void start_keeping(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  checkpoint_keeper_setup keeping{setup.job_id, setup.store, setup.timeouts.restore_timeout, {}};
  if (setup.resume && setup.resume->epochs_done > 0) {
    if (auto saved = setup.store->load_checkpoint(setup.job_id)) {
      keeping.latest = std::move(*saved);
      take_up(self, *setup.resume);
    } else {  // unusable: the job starts over rather than fail
      log::warning("job_master: job {} starts over: {}", setup.job_id, saved.err().message);
    }
  }
  if (setup.resume)
    st.report.scheduler_restarts = setup.resume->restarts;
  st.keeper = self->spawn<caf::linked>(checkpoint_keeper, std::move(keeping));
}

} // namespace

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
  st.report.topology = summary_of(st.plan, st.nodes.size());
  st.status.topology = status_line_of(st.plan);
  for (const auto& client : setup.clients)
    if (client) {
      self->monitor(client);
      st.clients.push_back(client);
    }
  st.hub = self->spawn<caf::linked>(relay);
  if (setup.store)
    start_keeping(self, setup);
  // The hub and the keeper end with the job (quit_when_stopped); their ends must not end it.
  self->set_exit_handler([self](const caf::exit_msg& exit) {
    if (exit.source == self->state.hub.address() || exit.source == self->state.keeper.address()
        || !exit.reason)
      return;
    self->quit(exit.reason);
  });
  self->set_down_handler([self](const caf::down_msg& down) {
    auto& clients = self->state.clients;
    clients.erase(std::remove_if(clients.begin(), clients.end(),
                                 [&](const caf::actor& c) { return c.address() == down.source; }),
                  clients.end());
  });
  assign(self, setup);
  self->delayed_send(self, setup.timeouts.silence_limit, watchdog_atom_v, setup.job_id);
  return {
    [self](const node_progress& progress) {
      if (!heard_this_round(self, progress))
        return;
      self->state.progress[progress.node_id] = progress;
      publish_progress(self);
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
      if (!current(st, failure.job_id, failure.node_id))
        return;
      fail_job(self, setup,
               make_error(strom_error::node_failed,
                          fmt::format("{}: {}", describe(st.members.at(failure.node_id).status),
                                      failure.message)));
    },
    [self, setup](const member_joined& joined) { return take_joiner(self, setup, joined); },
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
      auto& st = self->state;
      if (st.stopping.erase(lost.node_id) > 0)
        quit_when_stopped(self);
      if (st.joining.erase(lost.node_id) > 0) {
        st.members.erase(lost.node_id);
        st.prepared.erase(lost.node_id);
        return;
      }
      if (st.outcome || !in_job(st, lost.node_id)) {
        st.members.erase(lost.node_id);
        return;
      }
      if (st.status.state == "preparing") {
        st.members.erase(lost.node_id);
        return fail_job(self, setup, lost.reason);
      }
      lose_member(self, setup, lost);
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
