#include "strom/actors/cluster/scheduler.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/cluster/heartbeat_monitor.hpp"
#include "strom/actors/cluster/in_process_address.hpp"
#include "strom/actors/cluster/scheduler_steps.hpp"
#include "strom/log.hpp"

namespace strom::actors {

namespace scheduler_steps {

bool runs_on(const job_record& job, std::uint64_t node_id) {
  return std::find(job.nodes.begin(), job.nodes.end(), node_id) != job.nodes.end();
}

/// Job `job_id` no longer holds `node_id` (it refused or let go a node that joined).
void release(scheduler_state& st, std::uint64_t job_id, std::uint64_t node_id) {
  if (auto job = st.jobs.find(job_id); job != st.jobs.end())
    job->second.nodes.erase(std::remove(job->second.nodes.begin(), job->second.nodes.end(),
                                        node_id),
                            job->second.nodes.end());
}

/// Whether `agent` is a member's agent.
bool is_member(const scheduler_state& st, const caf::actor& agent) {
  return std::any_of(st.members.begin(), st.members.end(),
                     [&](const cluster_member& m) { return m.agent == agent; });
}

/// Whether no running job holds `node_id`.
bool is_free(const scheduler_state& st, std::uint64_t node_id) {
  return std::none_of(st.jobs.begin(), st.jobs.end(),
                      [&](const auto& job) { return runs_on(job.second, node_id); });
}

/// The job_master of job `job_id` while the job runs; null when it ended or is unknown.
job_master_actor running_master(const scheduler_state& st, std::uint64_t job_id) {
  const auto job = st.jobs.find(job_id);
  return job != st.jobs.end() ? job->second.master : job_master_actor{};
}

/// The running job whose job_master sent the current message, or jobs.end().
std::map<std::uint64_t, job_record>::iterator sending_master(self_ptr self) {
  auto& jobs = self->state.jobs;
  return std::find_if(jobs.begin(), jobs.end(), [&](const auto& job) {
    return job.second.master.address() == self->current_sender();
  });
}

/// Starts a job_master for `job` (its id, submission, nodes and clients set) and holds its
/// nodes; returns the job id.
std::uint64_t start_job(self_ptr self, const scheduler_setup& setup, job_master_setup job) {
  auto& st = self->state;
  job.scheduler = caf::actor_cast<job_scheduler_actor>(self);
  job.timeouts = setup.timeouts;
  job.failures_reported = setup.failures_reported;
  job.store = setup.store;
  job.checkpoint_every = setup.checkpoint_every;
  job.metrics = setup.metrics;
  job.place = setup.place;
  job.reach_relay = setup.reach_relay;
  auto& record = st.jobs[job.job_id];
  record.clients = job.clients;
  record.saved = job.resume ? *job.resume : saved_job{job.job_id, job.submission, {}, 0, {}, 0};
  record.saved.node_names.clear();
  // Workers and servers alike: a restarted scheduler resumes the job on both (try_resume).
  for (const auto* nodes : {&job.nodes, &job.servers})
    for (const auto& node : *nodes) {
      record.nodes.push_back(node.status.node_id);
      record.saved.node_names.push_back(node.status.name);
    }
  record.status.job_id = job.job_id;
  record.status.state = "preparing";
  // Linked: a job master never outlives the scheduler; monitored: one that ends without an
  // outcome (it crashed) fails its job and frees the nodes.
  record.master =
    caf::actor_cast<job_master_actor>(self->spawn<caf::linked>(job_master, std::move(job)));
  st.children.insert(record.master.address());
  self->monitor(record.master);
  persist(self, setup);
  return record.status.job_id;
}

/// Takes `wanted` free nodes of `role` (0: every one of them, at least one) into `picked`, or
/// says why it cannot.
std::optional<std::string> pick_nodes(const scheduler_state& st, const job_submission& job,
                                      const char* role, std::uint32_t wanted,
                                      std::vector<job_node>& picked) {
  std::size_t joined = 0;
  std::size_t free = 0;
  for (const auto& m : st.members) {
    if (m.status.role != role)
      continue;
    ++joined;
    free += is_free(st, m.status.node_id) ? 1 : 0;
  }
  const std::size_t needed = wanted ? wanted : std::max<std::size_t>(joined, 1);
  if (free < needed)
    return fmt::format("{} needs {} {} nodes, {} joined, {} of them free (the others run jobs)",
                       job.source, needed, role, joined, free);
  for (const auto& m : st.members)
    if (picked.size() < needed && m.status.role == role && is_free(st, m.status.node_id))
      picked.push_back({m.status, caf::actor_cast<job_agent_actor>(m.agent)});
  return std::nullopt;
}

submit_reply submit_now(self_ptr self, const scheduler_setup& setup, const job_submission& job_in,
                        const job_client_actor& client) {
  auto& st = self->state;
  if (st.members.empty())
    return {false, 0, "no node has joined the scheduler"};
  // A client's message: the job_master plans with these, so they must make sense.
  if (auto kind = parse_topology_kind(job_in.topology); !kind)
    return {false, 0, fmt::format("{}: {}", job_in.source, kind.err().message)};
  if (job_in.fanout < 1 || job_in.fanout > max_fanout)
    return {false, 0, fmt::format("{}: fanout {} is outside [1, {}]", job_in.source,
                                  job_in.fanout, max_fanout)};
  job_master_setup job;
  if (auto refusal = pick_nodes(st, job_in, node_role_worker, job_in.nodes, job.nodes))
    return {false, 0, std::move(*refusal)};
  if (job_in.kvstore)
    if (auto refusal = pick_nodes(st, job_in, node_role_server, job_in.servers, job.servers))
      return {false, 0, std::move(*refusal)};
  job.job_id = st.next_job_id++;
  job.submission = job_in;
  job.clients.push_back(client);
  return {true, start_job(self, setup, std::move(job)), {}};
}

bool enough_joined(const scheduler_state& st, const job_submission& job) {
  const auto joined = [&](const char* role) {
    return static_cast<std::uint32_t>(std::count_if(
      st.members.begin(), st.members.end(),
      [&](const cluster_member& m) { return m.status.role == role; }));
  };
  return joined(node_role_worker) >= std::max<std::uint32_t>(job.nodes, 1)
         && (!job.kvstore || joined(node_role_server) >= std::max<std::uint32_t>(job.servers, 1));
}

/// A client's submission: placed at once, or held while a restarted scheduler's nodes join
/// again and too few did yet (a client that submits during a restart is not refused for it).
caf::result<submit_reply> submit(self_ptr self, const scheduler_setup& setup,
                                 const job_submission& job) {
  auto& st = self->state;
  const auto client = caf::actor_cast<job_client_actor>(self->current_sender());
  if (!st.rejoining || enough_joined(st, job))
    return submit_now(self, setup, job, client);
  log::info("scheduler: holds {} until its nodes joined again", job.source);
  auto reply = self->make_response_promise<submit_reply>();
  st.held.push_back({job, client, reply});
  return reply;
}

/// A job ended with `outcome` (shown in status as `shown`): kept for status and late
/// attaches; its checkpoint goes.
void remember_outcome(self_ptr self, const scheduler_setup& setup, job_status shown,
                      job_finished outcome) {
  auto& st = self->state;
  if (setup.store)
    setup.store->drop_checkpoint(outcome.job_id);
  st.finished_jobs.push_back(std::move(shown));
  st.outcomes[outcome.job_id] = std::move(outcome);
  persist(self, setup);
}

/// Job `job` ended with `outcome`: its nodes are free.
void job_ended(self_ptr self, const scheduler_setup& setup,
               std::map<std::uint64_t, job_record>::iterator job, job_finished outcome) {
  const auto shown = job->second.status;
  self->state.jobs.erase(job);
  remember_outcome(self, setup, shown, std::move(outcome));
}

/// A job cancelled while its master stopped it to restart ends once the master ended: its
/// clients are told, as its master would have.
void end_cancelled_restart(self_ptr self, const scheduler_setup& setup,
                           std::map<std::uint64_t, job_record>::iterator job) {
  job_finished outcome;
  outcome.job_id = job->first;
  outcome.cancelled = true;
  outcome.failure = job->second.status.failure;
  outcome.report = job->second.saved.report;
  log::info("scheduler: job {} cancelled by a client while it restarted", job->first);
  for (const auto& client : job->second.clients)
    self->send(client, outcome);
  job_ended(self, setup, job, std::move(outcome));
}

/// A job_master ended before it told an outcome (it crashed): its job failed.
void job_master_crashed(self_ptr self, const scheduler_setup& setup,
                        std::map<std::uint64_t, job_record>::iterator job,
                        const caf::error& reason) {
  job_finished outcome;
  outcome.job_id = job->first;
  outcome.failure = "the job master stopped: " + error_text(self->system(), reason);
  log::warning("scheduler: job {} failed: {}", job->first, outcome.failure);
  job->second.status.state = state_of(outcome);
  job->second.status.failure = outcome.failure;
  job_ended(self, setup, job, std::move(outcome));
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

/// Offers a node that just joined to the oldest running job, which brings it in (a restore,
/// growth up to its --max-nodes, or a server node holding replicas of key ranges that lost
/// one) or refuses it; the node is held for the job meanwhile.
void offer_to_a_job(self_ptr self, const scheduler_setup& setup, const member_joined& joined) {
  auto& st = self->state;
  const auto node_id = joined.node.node_id;
  if (st.jobs.empty() || !is_member(st, joined.agent) || !is_free(st, node_id)
      || (joined.node.role != node_role_worker && joined.node.role != node_role_server))
    return;
  auto& [job_id, job] = *st.jobs.begin();
  job.nodes.push_back(node_id);
  self->request(job.master, setup.timeouts.answer_timeout, joined)
    .then(
      [self, job_id = job_id, node_id](bool taken) {
        if (!taken)
          release(self->state, job_id, node_id);
      },
      [self, job_id = job_id, node_id](caf::error&) { release(self->state, job_id, node_id); });
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
  if (setup.node_admission)
    if (auto refusal = setup.node_admission(agent.node(), request.name)) {
      log::warning("scheduler: refused node '{}' at {}: {}", request.name, request.address,
                   *refusal);
      return {false, 0, std::move(*refusal)};
    }
  cluster_member member;
  if (request.role != node_role_worker && request.role != node_role_server)
    return {false, 0,
            fmt::format("node {} asks for role '{}'; roles are {} and {}", request.name,
                        request.role, node_role_worker, node_role_server)};
  if (!std::isfinite(request.compute_rate) || request.compute_rate < 0.0)
    return {false, 0,
            fmt::format("node {} announces a compute rate of {}; it must be a finite number of "
                        "operations a second, or 0", request.name, request.compute_rate)};
  member.status = {st.next_node_id++, request.name,    request.address,
                   request.cores,     request.workers, ++st.incarnations[request.name],
                   request.role,      request.memory_limit, request.speed_factor,
                   request.compute_rate};
  member.agent = agent;
  member.last_heard = self->clock().now();
  self->monitor(agent);
  // Pings at least four per timeout, so a hang is seen within a quarter timeout of it.
  member.heartbeat = self->spawn<caf::linked>(
    heartbeat_monitor,
    heartbeat_setup{member.status.node_id, caf::actor_cast<pingable_actor>(agent),
                    caf::actor_cast<hung_reporter_actor>(self),
                    std::min(setup.timeouts.heartbeat_interval,
                             setup.timeouts.heartbeat_timeout / 4),
                    setup.timeouts.heartbeat_timeout, member.status.name, setup.metrics});
  st.children.insert(member.heartbeat.address());
  ++st.membership_epoch;
  // The nodes of an in-process cluster (`strom train`) are internals to whoever runs it.
  log::emit(member.status.address == in_process_address ? log::level::debug : log::level::info,
            "scheduler: {} joined with {} worker{} (incarnation {}, membership epoch {}{})",
            describe(member.status), request.workers, request.workers == 1 ? "" : "s",
            member.status.incarnation,
            st.membership_epoch,
            request.compute_rate > 0
              ? fmt::format(", measured {:.1f} GFLOP/s", request.compute_rate / 1e9)
              : "");
  const auto id = member.status.node_id;
  st.members.push_back(std::move(member));
  persist(self, setup);
  // Offered once this handler has answered: the node must have its join reply before the
  // job's assignment, and both travel the same connection.
  self->send(self, member_joined{st.members.back().status, agent, st.membership_epoch});
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

/// Notes a sign of life of the member that sent the current message.
void heard_from_sender(self_ptr self) {
  const auto sender = self->current_sender();
  for (auto& m : self->state.members)
    if (m.agent.address() == sender)
      m.last_heard = self->clock().now();
}

/// Hands a node's report about job `job_id` to the job's job_master (dropped nodes are told
/// so instead; reports about ended or unknown jobs are late and dropped).
template <class Report>
void pass_on(self_ptr self, const Report& report) {
  if (tell_if_dropped(self))
    return;
  heard_from_sender(self);
  if (auto master = running_master(self->state, report.job_id))
    self->send(master, report);
}

/// The answer to a node's keepalive: whether the scheduler still counts it as a member.
keepalive_reply keepalive(self_ptr self, std::uint64_t node_id) {
  heard_from_sender(self);
  const auto& st = self->state;
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (const auto* why = st.dropped.reason_for(sender))
    return {true, *why};
  for (const auto& m : st.members)
    if (m.agent.address() == sender)
      return {};
  return {true, fmt::format("node {} is not a member of the cluster", node_id)};
}

/// Passes a client's request about job `job_id` to its job_master while it runs; answers
/// about an ended job from its outcome (`on_ended`) and refuses an unknown one.
template <class Atom, class OnEnded>
caf::result<submit_reply> about_job(self_ptr self, Atom request, std::uint64_t job_id,
                                    OnEnded on_ended) {
  auto& st = self->state;
  if (auto master = running_master(st, job_id)) {
    auto promise = self->make_response_promise<submit_reply>();
    return promise.delegate(master, request, job_id);
  }
  if (auto done = st.outcomes.find(job_id); done != st.outcomes.end())
    return on_ended(done->second);
  return submit_reply{false, job_id, fmt::format("the scheduler knows no job {}", job_id)};
}

/// Removes a node from the cluster; the job_masters of jobs it ran are told.
void lose_node(self_ptr self, const scheduler_setup& setup, std::uint64_t node_id,
               const std::string& why) {
  auto& st = self->state;
  auto it = std::find_if(st.members.begin(), st.members.end(),
                         [&](const cluster_member& m) { return m.status.node_id == node_id; });
  if (it == st.members.end())
    return;
  const auto failure = fmt::format("{} lost: {}", describe(it->status), why);
  const double silent =
    std::chrono::duration<double>(self->clock().now() - it->last_heard).count();
  ++st.membership_epoch;
  const bool training = !is_free(st, node_id);
  if (training)
    log::warning("scheduler: {} (membership epoch {})", failure, st.membership_epoch);
  else  // between jobs, e.g. its daemon shutting down: not a failure
    log::info("scheduler: {} left: {} (membership epoch {})", describe(it->status), why,
              st.membership_epoch);
  self->demonitor(it->agent);
  self->send_exit(it->heartbeat, caf::exit_reason::user_shutdown);
  drop(self, it->agent, failure);
  st.members.erase(it);
  persist(self, setup);
  for (const auto& [id, job] : st.jobs)
    if (runs_on(job, node_id))
      self->send(job.master, member_lost{node_id, st.membership_epoch,
                                         make_error(strom_error::node_lost, failure), silent});
}

cluster_status status_of(const scheduler_state& st) {
  cluster_status status;
  for (const auto& m : st.members)
    status.nodes.push_back(m.status);
  status.jobs = st.finished_jobs;
  for (const auto& [id, job] : st.jobs)
    status.jobs.push_back(job.status);
  for (const auto& [id, job] : st.resuming)
    status.jobs.push_back(status_of_resuming(job.saved));
  status.membership_epoch = st.membership_epoch;
  return status;
}

} // namespace scheduler_steps

using namespace scheduler_steps;

caf::behavior scheduler(caf::stateful_actor<scheduler_state>* self, scheduler_setup setup) {
  // Children are linked so they never outlive the scheduler; their own ends (a monitor that
  // reported, a job master whose job ended) must not take the scheduler down with them.
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
    for (auto job = st.jobs.begin(); job != st.jobs.end(); ++job)
      if (job->second.master.address() == down.source) {
        const auto& state = job->second.status.state;
        if (state == "restarting")
          return restart_job(self, setup, job);
        if (state == "cancelled")  // while it restarted: it ends here
          return end_cancelled_restart(self, setup, job);
        return job_master_crashed(self, setup, job, down.reason);
      }
  });
  if (setup.restored)
    take_up(self, setup);
  return {
    [self, setup](const join_request& request) { return join(self, setup, request); },
    [self, setup](submit_atom, const job_submission& job) { return submit(self, setup, job); },
    [self, setup](cancel_atom, std::uint64_t job_id) -> caf::result<submit_reply> {
      if (auto job = self->state.resuming.find(job_id); job != self->state.resuming.end()) {
        job_finished outcome;
        outcome.job_id = job_id;
        outcome.cancelled = true;
        outcome.failure = "cancelled by a client while it waited for its nodes";
        outcome.report = job->second.saved.report;
        end_resuming(self, setup, job, std::move(outcome));
        return submit_reply{true, job_id, {}};
      }
      if (auto job = self->state.jobs.find(job_id);
          job != self->state.jobs.end() && job->second.status.state == "restarting") {
        job->second.status.state = "cancelled";  // instead of restarting once its master ended
        job->second.status.failure = "cancelled by a client while it restarted";
        return submit_reply{true, job_id, {}};
      }
      return about_job(self, cancel_atom_v, job_id, [job_id](const job_finished& done) {
        return submit_reply{false, job_id,
                            fmt::format("job {} has already ended ({})", job_id, state_of(done))};
      });
    },
    [self](attach_atom, std::uint64_t job_id) -> caf::result<submit_reply> {
      if (auto job = self->state.resuming.find(job_id); job != self->state.resuming.end()) {
        if (auto client = caf::actor_cast<job_client_actor>(self->current_sender()))
          job->second.clients.push_back(client);
        return submit_reply{true, job_id, {}};
      }
      if (auto job = self->state.jobs.find(job_id); job != self->state.jobs.end())
        if (auto client = caf::actor_cast<job_client_actor>(self->current_sender()))
          job->second.clients.push_back(client);  // kept for a restart of the job
      return about_job(self, attach_atom_v, job_id, [self, job_id](const job_finished& done) {
        if (auto client = caf::actor_cast<job_client_actor>(self->current_sender()))
          self->send(client, done);
        return submit_reply{true, job_id, {}};
      });
    },
    [self](keepalive_atom, std::uint64_t node_id) { return keepalive(self, node_id); },
    [self](status_atom) { return status_of(self->state); },
    [self](const node_progress& progress) { pass_on(self, progress); },
    [self](const node_epoch_report& report) { pass_on(self, report); },
    [self](const node_failure& failure) { pass_on(self, failure); },
    [self, setup](node_hung_atom, std::uint64_t node_id, const std::string& reason) {
      lose_node(self, setup, node_id, reason);
    },
    [self, setup](const member_joined& joined) {
      if (self->current_sender() == self->address())
        place_joined(self, setup, joined);
    },
    [self, setup](rejoin_atom, std::uint64_t job_id, std::uint32_t restarts) {
      const auto job = self->state.resuming.find(job_id);
      if (self->current_sender() == self->address() && job != self->state.resuming.end()
          && job->second.saved.job_restarts == restarts)
        try_resume(self, setup, job_id, true);
    },
    [self, setup](rejoin_atom) {
      if (self->current_sender() != self->address())
        return;
      self->state.rejoining = false;
      release_held(self, setup);
    },
    [self, setup](const job_checkpointed& done) { checkpointed(self, setup, done); },
    [self](forget_atom, std::uint64_t job_id, std::uint64_t node_id) {
      if (sending_master(self) != self->state.jobs.end())
        release(self->state, job_id, node_id);
    },
    [self](const job_status& status) {
      if (auto job = sending_master(self); job != self->state.jobs.end())
        job->second.status = status;
    },
    [self, setup](const job_finished& outcome) {
      auto job = sending_master(self);
      if (job == self->state.jobs.end())
        return;
      if (job->second.status.state == "restarting")
        note_restart(job->second, outcome);  // restart_job once the master ended
      else
        job_ended(self, setup, job, outcome);
    },
  };
}

} // namespace strom::actors
