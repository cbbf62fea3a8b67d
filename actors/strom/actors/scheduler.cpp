#include "strom/actors/scheduler.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/heartbeat_monitor.hpp"
#include "strom/actors/relay.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace {

using self_ptr = caf::stateful_actor<scheduler_state>*;

cluster_member* find_member(scheduler_state& st, std::uint64_t node_id) {
  for (auto& m : st.members)
    if (m.status.node_id == node_id)
      return &m;
  return nullptr;
}

std::string describe(const node_status& node) {
  return fmt::format("node {} ({} at {})", node.node_id, node.name, node.address);
}

double seconds_between(caf::actor_clock::time_point from, caf::actor_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool in_job(const running_job& job, std::uint64_t node_id) {
  return std::find(job.nodes.begin(), job.nodes.end(), node_id) != job.nodes.end();
}

void tell_clients(self_ptr self, const caf::message& msg) {
  for (const auto& client : self->state.job->clients)
    self->send(client, msg);
}

/// The state an ended job shows in status.
const char* state_of(const job_finished& outcome) {
  return outcome.succeeded ? "succeeded" : outcome.cancelled ? "cancelled" : "failed";
}

/// Ends the running job, successful or not: clients get the outcome, late attaches find it.
void end_job(self_ptr self, job_finished outcome) {
  auto& st = self->state;
  auto& job = *st.job;
  job.status.state = state_of(outcome);
  job.status.failure = outcome.failure;
  tell_clients(self, caf::make_message(outcome));
  st.outcomes[job.status.job_id] = std::move(outcome);
  st.finished_jobs.push_back(job.status);
  if (job.hub)
    self->send_exit(job.hub, caf::exit_reason::user_shutdown);
  st.job.reset();
}

/// The running job's nodes that are still members drop its actors; their answers no longer
/// matter.
void stop_on_nodes(self_ptr self, const scheduler_setup& setup) {
  auto& st = self->state;
  for (auto id : st.job->nodes)
    if (auto* m = find_member(st, id))
      self->request(m->agent, setup.answer_timeout, stop_atom_v, st.job->status.job_id)
        .then([](const node_sharing_report&) {}, [](caf::error&) {});
}

void fail_job(self_ptr self, const scheduler_setup& setup, std::string failure) {
  auto& st = self->state;
  if (!st.job)
    return;
  auto& job = *st.job;
  log::warning("scheduler: job {} failed: {}", job.status.job_id, failure);
  stop_on_nodes(self, setup);
  job_finished outcome;
  outcome.job_id = job.status.job_id;
  outcome.failure = std::move(failure);
  outcome.report = job.report;
  end_job(self, std::move(outcome));
}

void start_epoch(self_ptr self, std::uint32_t epoch) {
  auto& st = self->state;
  auto& job = *st.job;
  job.progress.clear();
  job.epoch_reports.clear();
  job.epoch_started = self->clock().now();
  job.last_heard = job.epoch_started;
  for (auto id : job.nodes)
    self->send(find_member(st, id)->agent, start_atom_v, job.status.job_id, epoch);
}

void publish_progress(self_ptr self) {
  auto& job = *self->state.job;
  step_progress p;
  p.epoch = job.status.epoch + 1;
  p.epochs = job.status.epochs;
  p.batches = job.batches_per_epoch;
  p.nodes_alive = static_cast<std::uint32_t>(job.nodes.size());
  double loss_sum = 0.0;
  std::uint64_t samples = 0;
  for (const auto& [id, node] : job.progress) {
    p.batch += node.batches;
    samples += node.samples;
    loss_sum += node.loss_sum;
  }
  p.mean_loss = p.batch ? loss_sum / p.batch : 0.0;
  const double elapsed = seconds_between(job.epoch_started, self->clock().now());
  p.samples_per_second = samples / std::max(elapsed, 1e-9);
  const double remaining = static_cast<double>(job.samples_per_epoch) * (p.epochs - job.status.epoch)
                           - static_cast<double>(samples);
  p.eta_seconds = remaining / std::max(p.samples_per_second, 1e-9);
  tell_clients(self, caf::make_message(job_progress{job.status.job_id, p}));
}

/// Every node has stopped the job and sent its counts: add the hub's and report.
void complete_job(self_ptr self, const scheduler_setup& setup) {
  auto& job = *self->state.job;
  auto& r = job.report;
  std::uint64_t updates = 0;
  double density_sum = 0.0;
  for (const auto& [id, node] : job.sharing) {
    r.bytes_sent += node.sent.bytes_sent;
    r.dense_bytes_equivalent += node.sent.dense_bytes_equivalent;
    updates += node.sent.updates;
    density_sum += node.sent.density_sum;
    r.duplicate_updates_dropped += node.relayed.duplicates_dropped;
    r.frames_rejected += node.relayed.frames_rejected;
  }
  r.mean_density = updates ? density_sum / updates : 0.0;
  r.final_threshold = job.sharing[job.nodes.front()].sent.threshold;
  self->request(job.hub, setup.answer_timeout, stats_atom_v)
    .then(
      [self](const relay_stats& hub) {
        auto& job = *self->state.job;
        job.report.duplicate_updates_dropped += hub.duplicates_dropped;
        job.report.frames_rejected += hub.frames_rejected;
        record_run(job.report, seconds_between(job.submitted, self->clock().now()));
        job_finished outcome;
        outcome.job_id = job.status.job_id;
        outcome.succeeded = true;
        outcome.report = job.report;
        end_job(self, std::move(outcome));
      },
      [self, setup](caf::error& err) {
        fail_job(self, setup, "the hub relay did not report: " + error_text(self->system(), err));
      });
}

void finish_job(self_ptr self, const scheduler_setup& setup) {
  auto& st = self->state;
  const auto job_id = st.job->status.job_id;
  for (auto id : st.job->nodes) {
    self->request(find_member(st, id)->agent, setup.answer_timeout, stop_atom_v, job_id)
      .then(
        [self, setup, job_id](const node_sharing_report& counts) {
          auto& st = self->state;
          if (!st.job || st.job->status.job_id != job_id)
            return;
          st.job->sharing[counts.node_id] = counts;
          if (st.job->sharing.size() == st.job->nodes.size())
            complete_job(self, setup);
        },
        [self, setup, job_id, id](caf::error& err) {
          if (self->state.job && self->state.job->status.job_id == job_id)
            fail_job(self, setup,
                     fmt::format("node {} did not report its counts: {}", id, error_text(self->system(), err)));
        });
  }
}

void end_epoch(self_ptr self, const scheduler_setup& setup) {
  auto& job = *self->state.job;
  const auto epoch = job.status.epoch;
  epoch_totals totals;
  drain_report drained;
  for (const auto& [id, node] : job.epoch_reports) {
    totals.loss_sum += node.totals.loss_sum;
    totals.batches += node.totals.batches;
    totals.samples += node.totals.samples;
    totals.seconds = std::max(totals.seconds, node.totals.seconds);
    drained.updates_applied += node.drained.updates_applied;
    drained.duplicate_updates_applied += node.drained.duplicate_updates_applied;
    drained.frames_rejected += node.drained.frames_rejected;
  }
  const auto& first = job.epoch_reports[job.nodes.front()];
  auto& r = job.report;
  r.iterations = first.iteration;
  r.checkpoint = first.checkpoint;
  // Counters of the trainers run over the whole job: the latest epoch holds the totals.
  r.updates_applied = drained.updates_applied;
  r.duplicate_updates_applied = drained.duplicate_updates_applied;
  r.frames_rejected = drained.frames_rejected;
  const auto summary = record_epoch(r, epoch, totals, first.tested);
  job.status.epoch = epoch + 1;
  job.status.test_accuracy = summary.test_accuracy;
  tell_clients(self, caf::make_message(job_epoch{job.status.job_id, summary}));
  if (job.status.epoch < job.status.epochs)
    start_epoch(self, job.status.epoch);
  else
    finish_job(self, setup);
}

/// Whether a message from a node is about the running job, from one of its nodes.
bool current(const scheduler_state& st, std::uint64_t job_id, std::uint64_t node_id) {
  return st.job && st.job->status.job_id == job_id && in_job(*st.job, node_id);
}

submit_reply submit(self_ptr self, const scheduler_setup& setup, const job_submission& job_in) {
  auto& st = self->state;
  if (st.job)
    return {false, 0,
            fmt::format("job {} is running; the scheduler runs one job at a time",
                        st.job->status.job_id)};
  if (st.members.empty())
    return {false, 0, "no node has joined the scheduler"};
  const std::size_t wanted = job_in.nodes ? job_in.nodes : st.members.size();
  if (wanted > st.members.size())
    return {false, 0,
            fmt::format("{} needs {} nodes, {} joined", job_in.source, wanted, st.members.size())};
  auto& job = st.job.emplace();
  job.status.job_id = st.next_job_id++;
  job.status.state = "preparing";
  job.submission = job_in;
  job.submitted = self->clock().now();
  job.last_heard = job.submitted;
  job.hub = self->spawn<caf::linked>(relay);
  st.children.insert(job.hub.address());
  std::uint32_t total_workers = 0;
  for (std::size_t rank = 0; rank < wanted; ++rank) {
    job.nodes.push_back(st.members[rank].status.node_id);
    total_workers += st.members[rank].status.workers;
  }
  job.report.nodes = static_cast<std::uint32_t>(wanted);
  job.report.workers = total_workers;
  if (auto client = caf::actor_cast<caf::actor>(self->current_sender())) {
    self->monitor(client);
    job.clients.push_back(client);
  }
  const auto job_id = job.status.job_id;
  std::uint32_t first_worker = 0;
  for (std::uint32_t rank = 0; rank < wanted; ++rank) {
    const auto& member = *find_member(st, job.nodes[rank]);
    job_assignment a;
    a.job_id = job_id;
    a.job_text = job_in.job_text;
    a.source = job_in.source;
    a.checkpoint_dir = rank == 0 ? job_in.checkpoint_dir : std::string{};
    a.rank = rank;
    a.workers = member.status.workers;
    a.first_worker = first_worker;
    a.total_workers = total_workers;
    a.origins = job.nodes;
    a.hub = job.hub;
    first_worker += member.status.workers;
    const auto node_id = member.status.node_id;
    self->request(member.agent, setup.prepare_timeout, std::move(a))
      .then(
        [self, job_id, node_id](const node_ready& ready) {
          auto& st = self->state;
          if (!current(st, job_id, node_id))
            return;
          auto& job = *st.job;
          self->send(job.hub, add_peer_atom_v, ready.relay);
          job.batches_per_epoch += ready.batches_per_epoch;
          job.samples_per_epoch += ready.samples_per_epoch;
          if (node_id == job.nodes.front()) {
            job.status.name = job.report.job = ready.job_name;
            job.status.epochs = job.report.epochs = ready.epochs;
          }
          job.last_heard = self->clock().now();
          if (++job.ready < job.nodes.size())
            return;
          job.status.state = "training";
          log::info("scheduler: job {} ({}) starts on {} nodes, {} workers", job_id,
                    job.status.name, job.nodes.size(), job.report.workers);
          start_epoch(self, 0);
        },
        [self, setup, job_id, node_id](caf::error& err) {
          if (current(self->state, job_id, node_id))
            fail_job(self, setup,
                     fmt::format("node {} did not prepare the job: {}", node_id, error_text(self->system(), err)));
        });
  }
  self->delayed_send(self, setup.silence_limit, watchdog_atom_v, job_id);
  return {true, job_id, {}};
}

/// Whether `offered` is the admission token `expected`, in time independent of where they
/// differ (the token guards a port).
bool same_token(const std::string& expected, const std::string& offered) {
  unsigned char difference = expected.size() == offered.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i)
    difference |= static_cast<unsigned char>(expected[i] ^ (i < offered.size() ? offered[i] : 0));
  return difference == 0;
}

/// Why `request` may not join a scheduler that admits only nodes with its admission token;
/// empty when it may.
std::optional<std::string> admission_refusal(const scheduler_setup& setup,
                                             const join_request& request) {
  if (setup.admission_token.empty() || same_token(setup.admission_token, request.admission_token))
    return std::nullopt;
  log::warning("scheduler: refused node '{}' at {}: it did not bring the admission token",
               request.name, request.address);
  return fmt::format("the scheduler admits only the nodes of its own in-process cluster; "
                     "node '{}' at {} did not bring its admission token",
                     request.name, request.address);
}

join_reply join(self_ptr self, const scheduler_setup& setup, const join_request& request) {
  auto& st = self->state;
  if (auto refusal = admission_refusal(setup, request))
    return {false, 0, std::move(*refusal)};
  if (request.version != protocol_version)
    return {false, 0,
            fmt::format("node {} speaks protocol version {}, the scheduler speaks {}",
                        request.name, request.version, protocol_version)};
  if (request.workers == 0)
    return {false, 0, fmt::format("node {} offers no workers", request.name)};
  for (const auto& m : st.members)
    if (m.status.name == request.name)
      return {false, 0,
              fmt::format("a node named '{}' has joined already ({})", request.name,
                          describe(m.status))};
  auto agent = caf::actor_cast<caf::actor>(self->current_sender());
  if (!agent)
    return {false, 0, "a join request must come from the node's agent"};
  cluster_member member;
  member.status = {st.next_node_id++, request.name, request.address, request.cores,
                   request.workers};
  member.agent = agent;
  self->monitor(agent);
  member.heartbeat = self->spawn<caf::linked>(
    heartbeat_monitor, heartbeat_setup{member.status.node_id, agent,
                                       caf::actor_cast<caf::actor>(self),
                                       setup.heartbeat_interval, setup.heartbeat_timeout});
  st.children.insert(member.heartbeat.address());
  log::info("scheduler: {} joined with {} workers", describe(member.status), request.workers);
  const auto id = member.status.node_id;
  st.members.push_back(std::move(member));
  return {true, id, {}};
}

/// Remembers `agent`'s node as dropped and tells it: a hung node reads this once it runs
/// again (a crashed one never does).
void drop(self_ptr self, const caf::actor& agent, const std::string& why) {
  self->state.dropped.remember(agent.address(), why);
  self->send(agent, dropped_atom_v, why);
}

/// True when the current message comes from a dropped node's agent, which is told again.
bool tell_if_dropped(self_ptr self) {
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  const auto* why = self->state.dropped.reason_for(sender);
  if (why)
    self->send(caf::actor_cast<caf::actor>(self->current_sender()), dropped_atom_v, *why);
  return why != nullptr;
}

/// The answer to a node's keepalive: whether the scheduler still counts it as a member.
keepalive_reply keepalive(self_ptr self, std::uint64_t node_id) {
  const auto& st = self->state;
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (const auto* why = st.dropped.reason_for(sender))
    return {true, *why};
  for (const auto& m : st.members)
    if (m.agent.address() == sender)
      return {};
  return {true, fmt::format("node {} is not a member of the cluster", node_id)};
}

/// Cancels job `job_id` for a client: its nodes drop its actors and it ends as "cancelled".
submit_reply cancel(self_ptr self, const scheduler_setup& setup, std::uint64_t job_id) {
  auto& st = self->state;
  if (st.job && st.job->status.job_id == job_id) {
    log::info("scheduler: job {} cancelled by a client", job_id);
    stop_on_nodes(self, setup);
    job_finished outcome;
    outcome.job_id = job_id;
    outcome.cancelled = true;
    outcome.failure = "cancelled by a client";
    outcome.report = st.job->report;
    end_job(self, std::move(outcome));
    return {true, job_id, {}};
  }
  if (auto done = st.outcomes.find(job_id); done != st.outcomes.end())
    return {false, job_id,
            fmt::format("job {} has already ended ({})", job_id, state_of(done->second))};
  return {false, job_id, fmt::format("the scheduler knows no job {}", job_id)};
}

/// Removes a node from the cluster; if it trains the running job, the job fails.
void lose_node(self_ptr self, const scheduler_setup& setup, std::uint64_t node_id,
               const std::string& why) {
  auto& st = self->state;
  auto it = std::find_if(st.members.begin(), st.members.end(),
                         [&](const cluster_member& m) { return m.status.node_id == node_id; });
  if (it == st.members.end())
    return;
  const auto failure = fmt::format("{} lost: {}", describe(it->status), why);
  const bool training = st.job && in_job(*st.job, node_id);
  if (training)
    log::warning("scheduler: {}", failure);
  else  // between jobs, e.g. its daemon shutting down: not a failure
    log::info("scheduler: {} left: {}", describe(it->status), why);
  self->demonitor(it->agent);
  self->send_exit(it->heartbeat, caf::exit_reason::user_shutdown);
  drop(self, it->agent, failure);
  st.members.erase(it);
  if (training)
    fail_job(self, setup, failure);
}

} // namespace

caf::behavior scheduler(caf::stateful_actor<scheduler_state>* self, scheduler_setup setup) {
  // Children are linked so they never outlive the scheduler; their own ends (a monitor that
  // reported, a hub stopped after its job) must not take the scheduler down with them.
  self->set_exit_handler([self](const caf::exit_msg& exit) {
    if (self->state.children.erase(exit.source) > 0 || !exit.reason)
      return;
    self->quit(exit.reason);
  });
  self->set_down_handler([self, setup](const caf::down_msg& down) {
    auto& st = self->state;
    for (const auto& m : st.members)
      if (m.agent.address() == down.source)
        return lose_node(self, setup, m.status.node_id, error_text(self->system(), down.reason));
    if (st.job) {
      auto& clients = st.job->clients;
      clients.erase(std::remove_if(clients.begin(), clients.end(),
                                   [&](const caf::actor& c) { return c.address() == down.source; }),
                    clients.end());
    }
  });
  return {
    [self, setup](const join_request& request) { return join(self, setup, request); },
    [self, setup](submit_atom, const job_submission& job) { return submit(self, setup, job); },
    [self, setup](cancel_atom, std::uint64_t job_id) { return cancel(self, setup, job_id); },
    [self](keepalive_atom, std::uint64_t node_id) { return keepalive(self, node_id); },
    [self](attach_atom, std::uint64_t job_id) -> submit_reply {
      auto& st = self->state;
      auto client = caf::actor_cast<caf::actor>(self->current_sender());
      if (st.job && st.job->status.job_id == job_id) {
        if (client) {
          self->monitor(client);
          st.job->clients.push_back(client);
        }
        return {true, job_id, {}};
      }
      if (auto done = st.outcomes.find(job_id); done != st.outcomes.end()) {
        if (client)
          self->send(client, done->second);
        return {true, job_id, {}};
      }
      return {false, job_id, fmt::format("the scheduler knows no job {}", job_id)};
    },
    [self](status_atom) {
      const auto& st = self->state;
      cluster_status status;
      for (const auto& m : st.members)
        status.nodes.push_back(m.status);
      status.jobs = st.finished_jobs;
      if (st.job)
        status.jobs.push_back(st.job->status);
      return status;
    },
    [self](const node_progress& progress) {
      auto& st = self->state;
      if (tell_if_dropped(self))
        return;
      if (!current(st, progress.job_id, progress.node_id)
          || progress.epoch != st.job->status.epoch)
        return;
      st.job->progress[progress.node_id] = progress;
      st.job->last_heard = self->clock().now();
      publish_progress(self);
    },
    [self, setup](const node_epoch_report& report) {
      auto& st = self->state;
      if (tell_if_dropped(self))
        return;
      if (!current(st, report.job_id, report.node_id) || report.epoch != st.job->status.epoch)
        return;
      st.job->epoch_reports[report.node_id] = report;
      st.job->last_heard = self->clock().now();
      if (st.job->epoch_reports.size() == st.job->nodes.size())
        end_epoch(self, setup);
    },
    [self, setup](const node_failure& failure) {
      auto& st = self->state;
      if (tell_if_dropped(self))
        return;
      if (!current(st, failure.job_id, failure.node_id))
        return;
      fail_job(self, setup,
               fmt::format("{}: {}", describe(find_member(st, failure.node_id)->status),
                           failure.message));
    },
    [self, setup](node_hung_atom, std::uint64_t node_id, const std::string& reason) {
      lose_node(self, setup, node_id, reason);
    },
    [self, setup](watchdog_atom, std::uint64_t job_id) {
      auto& st = self->state;
      if (!st.job || st.job->status.job_id != job_id)
        return;
      const auto quiet = self->clock().now() - st.job->last_heard;
      if (quiet >= setup.silence_limit)
        return fail_job(self, setup,
                        fmt::format("no word from the job's nodes for {} s",
                                    std::chrono::duration_cast<std::chrono::seconds>(quiet).count()));
      self->delayed_send(self, setup.silence_limit - quiet, watchdog_atom_v, job_id);
    },
  };
}

} // namespace strom::actors
