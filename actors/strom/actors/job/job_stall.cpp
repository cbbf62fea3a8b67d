// The job_master's stall watch (stall_watch.hpp has the judgement): it notes when each node's
// steps last grew, asks the nodes what their workers do once one stood still for
// stall_warning, and puts the verdict into the job's status and the log.

#include "strom/actors/job/job_stall.hpp"

#include <algorithm>
#include <chrono>

#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/job/stall_watch.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

/// The shortest tick: a warning of a few milliseconds (a test's) must not keep the job_master
/// busy ticking.
constexpr auto min_watch_period = std::chrono::milliseconds(10);

/// The tick's period: a quarter of the warning, so a stall is judged within 1.25 warnings
/// (and the verdict within a node's answer limit more).
caf::timespan watch_period(const job_master_setup& setup) {
  return std::max<caf::timespan>(setup.timeouts.stall_warning / 4, min_watch_period);
}

/// The longest a node of the running round has stood still (nodes done with it excluded).
caf::timespan stillness(const job_master_state& st, caf::actor_clock::time_point now) {
  caf::timespan longest{0};
  for (const auto id : st.nodes) {
    if (st.epoch_reports.count(id) > 0)
      continue;
    const auto at = st.stall.progressed_at.find(id);
    const auto since = at == st.stall.progressed_at.end() ? st.round_started : at->second;
    longest = std::max(longest, now - since);
  }
  return longest;
}

void clear_stall(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.status.stall.empty())
    return;
  log::info("job_master: job {} moves again", st.status.job_id);
  st.status.stall.clear();
  st.stall.stalled_on.reset();
  report_status(self, setup);
}

/// Judges the answers so far (a node yet to answer counts as not answering): a verdict once
/// the waiting workers name a node, or once every answer is in.
void judge(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto now = self->clock().now();
  if (stillness(st, now) < setup.timeouts.stall_warning)
    return;  // an answer that came after the nodes moved again
  std::vector<stalled_node> nodes;
  for (const auto id : st.nodes) {
    stalled_node node;
    node.node_id = id;
    node.node = describe(st.members.at(id).status);
    node.round = st.round;
    const auto workers = st.prepared.count(id) ? std::max(st.prepared.at(id).workers, 1u) : 1u;
    if (const auto done = st.epoch_reports.find(id); done != st.epoch_reports.end())
      node.steps = done->second.totals.batches / workers;
    else if (const auto progress = st.progress.find(id); progress != st.progress.end())
      node.steps = progress->second.batches / workers;
    const auto at = st.stall.progressed_at.find(id);
    node.quiet_seconds =
      seconds_between(at == st.stall.progressed_at.end() ? st.round_started : at->second, now);
    if (const auto answer = st.stall.inquiry.find(id); answer != st.stall.inquiry.end())
      node.answer = answer->second;
    nodes.push_back(std::move(node));
  }
  const auto found = stall_verdict(nodes);
  // Nobody waits; or no waits name anyone yet and answers are still out: wait for them.
  if (!found || (found->waiting_workers == 0 && st.stall.inquiry_pending > 0))
    return;
  if (st.stall.stalled_on != found->node_id) {
    st.stall.stalled_on = found->node_id;
    const auto named = std::find_if(nodes.begin(), nodes.end(), [&](const stalled_node& node) {
      return node.node_id == found->node_id;
    });
    st.stall.stalled_since = now - std::chrono::duration_cast<caf::timespan>(
                               std::chrono::duration<double>(named->quiet_seconds));
    log::warning("job_master: job {} stalls, {}", st.status.job_id, found->text);
  }
  if (st.status.stall != found->text) {
    st.status.stall = found->text;
    report_status(self, setup);
  }
}

/// Asks every live node of the job what its workers do.
void inquire(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  st.stall.inquiry.clear();
  st.stall.inquiry_pending = st.nodes.size();
  const auto job_id = st.status.job_id;
  const auto round = st.round;
  for (const auto id : st.nodes) {
    const auto node = id;
    const auto current = [self, job_id, round] {
      auto& st = self->state;
      return !st.outcome && st.status.job_id == job_id && st.round == round
             && st.stall.inquiry_pending > 0;
    };
    // A plain request: its limit is short, and inquiries repeat while a stall lasts (the
    // job's pending_requests would keep each).
    self->request(st.members.at(id).agent, node_activity_limit, stall_atom_v, job_id)
      .then(
        [self, setup, node, current](const node_activity& answer) {
          if (!current())
            return;
          self->state.stall.inquiry[node] = answer;
          --self->state.stall.inquiry_pending;
          judge(self, setup);
        },
        [self, setup, node, current](caf::error&) {
          if (!current())
            return;
          self->state.stall.inquiry[node] = std::nullopt;
          --self->state.stall.inquiry_pending;
          judge(self, setup);
        });
  }
}

} // namespace

void note_progress(self_ptr self, const node_progress& progress) {
  auto& st = self->state;
  const auto before = st.progress.find(progress.node_id);
  if (before == st.progress.end() || progress.batches > before->second.batches)
    st.stall.progressed_at[progress.node_id] = self->clock().now();
}

void watch_stalls(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.outcome)
    return;
  self->delayed_send(self, watch_period(setup), stall_atom_v, st.status.job_id);
  if (!st.round_running || st.paused || st.finishing
      || stillness(st, self->clock().now()) < setup.timeouts.stall_warning)
    return clear_stall(self, setup);
  if (st.stall.inquiry_pending == 0)
    inquire(self, setup);
}

} // namespace strom::actors::job_steps
