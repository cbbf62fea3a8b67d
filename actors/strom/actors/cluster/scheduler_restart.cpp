// What a scheduler keeps in its store (--state-dir) and how it takes it up again after a
// restart: its counters go on, each job that ran waits for its nodes and resumes from its
// checkpoint (scheduler.hpp, scheduler_store.hpp).
#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/job/job_master.hpp"
#include "strom/actors/cluster/scheduler_steps.hpp"
#include "strom/log.hpp"

namespace strom::actors::scheduler_steps {

/// Ended jobs the record keeps for status and late attaches after a restart; older ones go.
constexpr std::size_t kept_outcomes = 100;

/// What the store keeps of the scheduler now: its counters, its running and resuming jobs,
/// and the latest outcomes.
scheduler_record record_of(const scheduler_state& st) {
  scheduler_record record;
  record.restarts = st.restarts;
  record.next_node_id = st.next_node_id;
  record.next_job_id = st.next_job_id;
  record.membership_epoch = st.membership_epoch;
  record.incarnations = st.incarnations;
  for (const auto& [id, job] : st.jobs)
    record.jobs.push_back(job.saved);
  for (const auto& [id, job] : st.resuming)
    record.jobs.push_back(job.saved);
  const auto skipped = st.outcomes.size() > kept_outcomes ? st.outcomes.size() - kept_outcomes : 0;
  for (auto done = std::next(st.outcomes.begin(), static_cast<std::ptrdiff_t>(skipped));
       done != st.outcomes.end(); ++done)
    record.outcomes.push_back(done->second);
  return record;
}

/// Writes the scheduler's record to its store, if it has one. A failed write is logged and
/// the scheduler goes on: its running jobs lose nothing by it, only a restart would.
void persist(self_ptr self, const scheduler_setup& setup) {
  if (!setup.store)
    return;
  if (auto saved = setup.store->save(record_of(self->state)); !saved)
    log::warning("scheduler: cannot keep its state: {}", saved.err().message);
}

/// How `outcome` shows in status.
job_status status_of_outcome(const job_finished& outcome) {
  job_status shown;
  shown.job_id = outcome.job_id;
  shown.name = outcome.report.job;
  shown.state = state_of(outcome);
  shown.epochs = outcome.report.epochs;
  shown.failure = outcome.failure;
  shown.test_accuracy = outcome.report.test_accuracy;
  return shown;
}

/// How long a restarted scheduler holds submissions while its nodes join again: they come
/// back within a second or two (their reconnect pause grows to 2 s), and a client waits 10 s
/// for an answer (client_limits::answer).
constexpr auto held_submission_limit = std::chrono::seconds(5);

/// How a job waiting for its nodes after a restart shows in status.
job_status status_of_resuming(const saved_job& saved) {
  job_status shown;
  shown.job_id = saved.job_id;
  shown.name = saved.report.job;
  shown.state = "resuming";
  shown.epoch = saved.epochs_done;
  shown.epochs = saved.report.epochs;
  return shown;
}

/// Job `saved` waits for its nodes to join again (or be free), at most its rejoin timeout,
/// to resume from its checkpoint (try_resume); `clients` follow it.
void wait_for_nodes(self_ptr self, const scheduler_setup& setup, saved_job saved,
                    std::vector<job_client_actor> clients) {
  const auto wait = rejoin_timeout_of(saved.submission, setup.timeouts);
  log::info("scheduler: job {} waits up to {:g} s for its nodes ({}) to resume after epoch {}",
            saved.job_id, std::chrono::duration<double>(wait).count(),
            fmt::join(saved.node_names, ", "), saved.epochs_done);
  // Tagged with the job's restarts: the deadline of an earlier wait does not end this one.
  self->delayed_send(self, wait, rejoin_atom_v, saved.job_id, saved.job_restarts);
  const auto id = saved.job_id;
  self->state.resuming[id] = {std::move(saved), std::move(clients)};
}

/// Takes up the record the scheduler's store held: the counters go on where they were, and
/// each job that ran waits for its nodes to join again.
void take_up(self_ptr self, const scheduler_setup& setup) {
  auto& st = self->state;
  const auto& record = *setup.restored;
  st.restarts = record.restarts + 1;
  st.next_node_id = record.next_node_id;
  st.next_job_id = record.next_job_id;
  st.membership_epoch = record.membership_epoch;
  st.incarnations = record.incarnations;
  for (const auto& done : record.outcomes) {
    st.outcomes[done.job_id] = done;
    st.finished_jobs.push_back(status_of_outcome(done));
  }
  for (auto saved : record.jobs) {
    ++saved.restarts;
    wait_for_nodes(self, setup, std::move(saved), {});
  }
  log::info("scheduler: restart {} took up its state: membership epoch {}, {} jobs to resume",
            st.restarts, st.membership_epoch, st.resuming.size());
  if (!record.incarnations.empty()) {  // nodes joined before: they join again
    st.rejoining = true;
    self->delayed_send(self, held_submission_limit, rejoin_atom_v);
  }
  persist(self, setup);
}

/// A resuming job ends without running again (cancelled, or its nodes did not come back).
void end_resuming(self_ptr self, const scheduler_setup& setup,
                  std::map<std::uint64_t, resuming_job>::iterator job, job_finished outcome) {
  for (const auto& client : job->second.clients)
    self->send(client, outcome);
  auto shown = status_of_resuming(job->second.saved);
  shown.state = state_of(outcome);
  shown.failure = outcome.failure;
  self->state.resuming.erase(job);
  remember_outcome(self, setup, std::move(shown), std::move(outcome));
}

/// Starts resuming job `job_id` once all its nodes joined again, or at its deadline with the
/// ones that did if they are enough (--min-nodes); fails it at the deadline otherwise.
void try_resume(self_ptr self, const scheduler_setup& setup, std::uint64_t job_id,
                bool deadline) {
  auto& st = self->state;
  const auto job = st.resuming.find(job_id);
  if (job == st.resuming.end())
    return;
  const auto& saved = job->second.saved;
  std::vector<job_node> back;     // its workers
  std::vector<job_node> servers;  // a kvstore job's server nodes
  for (const auto& m : st.members)
    if (is_free(st, m.status.node_id)
        && std::count(saved.node_names.begin(), saved.node_names.end(), m.status.name) > 0)
      (m.status.role == node_role_server ? servers : back)
        .push_back({m.status, caf::actor_cast<job_agent_actor>(m.agent)});
  if (back.size() + servers.size() < saved.node_names.size() && !deadline)
    return;
  if (back.size() < std::max<std::size_t>(saved.submission.min_nodes, 1)
      || (saved.submission.kvstore && servers.empty())) {
    job_finished outcome;
    outcome.job_id = job_id;
    outcome.report = saved.report;
    outcome.failure = fmt::format(
      "{} of the job's nodes ({}) were back within {:g} s to resume it from its checkpoint{}",
      back.size() + servers.size(), fmt::join(saved.node_names, ", "),
      std::chrono::duration<double>(rejoin_timeout_of(saved.submission, setup.timeouts)).count(),
      saved.submission.kvstore && servers.empty() ? ", none of its servers" : "");
    log::warning("scheduler: job {} failed: {}", job_id, outcome.failure);
    return end_resuming(self, setup, job, std::move(outcome));
  }
  job_master_setup resumed;
  resumed.job_id = job_id;
  resumed.submission = saved.submission;
  resumed.nodes = std::move(back);
  resumed.servers = std::move(servers);
  resumed.clients = std::move(job->second.clients);
  resumed.resume = saved;
  st.resuming.erase(job);
  start_job(self, setup, std::move(resumed));
}

/// Whether a node named `name` is one a resuming job waits for.
bool awaited(const scheduler_state& st, const std::string& name) {
  return std::any_of(st.resuming.begin(), st.resuming.end(), [&](const auto& job) {
    const auto& names = job.second.saved.node_names;
    return std::count(names.begin(), names.end(), name) > 0;
  });
}

/// A node joined: it resumes the jobs that waited for it, or places a held submission, or is
/// offered to a running job.
void place_joined(self_ptr self, const scheduler_setup& setup, const member_joined& joined) {
  std::vector<std::uint64_t> waiting;
  for (const auto& [id, job] : self->state.resuming)
    waiting.push_back(id);
  for (auto id : waiting)
    try_resume(self, setup, id, false);
  release_held(self, setup);
  if (!awaited(self->state, joined.node.name))
    offer_to_a_job(self, setup, joined);
}

void release_held(self_ptr self, const scheduler_setup& setup) {
  auto& st = self->state;
  for (auto& submission : std::exchange(st.held, {})) {
    if (st.rejoining && !enough_joined(st, submission.job))
      st.held.push_back(std::move(submission));
    else
      submission.reply.deliver(submit_now(self, setup, submission.job, submission.client));
  }
}

/// A job_master saved its job's checkpoint: the record keeps how far the job got and the
/// nodes it ran on.
void checkpointed(self_ptr self, const scheduler_setup& setup, const job_checkpointed& done) {
  auto& st = self->state;
  const auto job = sending_master(self);
  if (job == st.jobs.end() || job->first != done.job_id)
    return;
  auto& saved = job->second.saved;
  saved.epochs_done = done.epochs_done;
  saved.report = done.report;
  // The names it started on stay: a resume waits for them all (a pipeline's spare too, which
  // the job needs to be placed again), and for any it runs on now.
  for (const auto& m : st.members)
    if (runs_on(job->second, m.status.node_id)
        && std::count(saved.node_names.begin(), saved.node_names.end(), m.status.name) == 0)
      saved.node_names.push_back(m.status.name);
  persist(self, setup);
}

void note_restart(job_record& job, const job_finished& outcome) {
  auto& saved = job.saved;
  ++saved.job_restarts;
  auto& r = saved.report;
  const auto& reached = outcome.report;
  const auto since = reached.train_samples > r.train_samples
                       ? reached.train_samples - r.train_samples : 0;
  carry_faults(r, reached);
  r.samples_redone += since;
}

void restart_job(self_ptr self, const scheduler_setup& setup,
                 std::map<std::uint64_t, job_record>::iterator job) {
  auto& st = self->state;
  const auto job_id = job->first;
  // Its job_master logged why and which restart this is.
  log::info("scheduler: job {} starts again from its checkpoint after epoch {}", job_id,
            job->second.saved.epochs_done);
  wait_for_nodes(self, setup, std::move(job->second.saved), std::move(job->second.clients));
  st.jobs.erase(job);
  persist(self, setup);
  try_resume(self, setup, job_id, false);
}

} // namespace strom::actors::scheduler_steps
