// The job_master's part in restoring a pipeline job's lost stage (issue #20, LightDNN's stage
// restore). Every stage's holder tells the job_master which of the stage's snapshots it keeps
// (pipeline_snapshot_held). When a stage's node is lost, the job_master picks the latest point
// the lost stage's holder keeps a copy of and every other stage a snapshot of, in the current
// epoch (or its end, once its training has ended), and a target: a spare (a node of the job
// that runs no stage) or else a neighbouring stage's node with the memory for both. In a new
// generation of the pipeline it then, at once and in parallel,
//   - has the target spawn the stage (stage_assignment), connect to the stage's neighbours
//     and take the stage's snapshot from the holder (stage_restore), and
//   - rolls every other stage back to its own snapshot of the same point (stage_rollback);
// once all answered, it links the stages again and has the first stage go on from that point
// (or evaluate the epoch). The minibatches since the point are trained again: samples_redone.
// When the epoch's end is not held everywhere yet, the restore goes back into the epoch; when
// no point of the epoch is, and the epoch is the first this run of the job trains (from its
// start or a resume's checkpoint: copies of the stages' first snapshots may still be on their
// way), the lost stage starts again on the target from the model the run began with and the
// others go back to the epoch's start (restore_target_of). Without a target, or without any of
// these points, the job fails naming why.
//
// Before the first epoch (the subnets spawning or being linked) there is no point to go back
// to, and none is needed: the lost stage starts again on the target, from the model the job
// starts with, and the stages are linked again (restart_stage).
//
// With copies of the pipeline (--pipelines) every stage of every copy goes back to the same
// point, where each copy had sent the others as many updates (subnet.hpp); a holder and a
// merge target are in the lost stage's own copy; every copy goes on from the point, and the
// copies whose share of the epoch had ended train it again from there, so what they reported
// is withdrawn. Updates one copy sent after another's snapshot and before its own are not
// sent again: a copy may miss the last one or two of another's (threshold sharing tolerates
// it as it tolerates its residuals).

#include "strom/actors/pipeline/job_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/pipeline/stage_snapshots.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

/// The latest point that lost slot `lost`'s holder keeps a copy of and every other slot keeps
/// its own snapshot of: in epoch `epoch`, or at its end when `at_end` (once its training has
/// ended: the evaluation is then run again).
std::optional<stage_point> restore_point(const pipeline_run& run, std::uint32_t lost,
                                         std::uint32_t epoch, bool at_end) {
  const auto& copies = run.held[lost];
  for (auto copy = copies.rbegin(); copy != copies.rend(); ++copy) {
    const bool usable = at_end ? copy->at == stage_point{epoch + 1, 0}
                               : copy->at.epoch == epoch;
    const auto at = [&](const stage_snapshot_note& note) { return note.at == copy->at; };
    const bool everywhere = std::all_of(run.taken.begin(), run.taken.end(), [&](const auto& t) {
      return std::any_of(t.begin(), t.end(), at);
    });
    if (usable && everywhere)
      return copy->at;
  }
  return std::nullopt;
}

/// The point `at` as slot `slot` goes back to it: with the epoch's figures so far of the last
/// stage of the slot's copy (its own snapshot's note), which that copy goes on from.
stage_snapshot_note note_at(const pipeline_run& run, const stage_point& at, std::uint32_t slot) {
  const auto last = slot - slot % run.stages() + run.stages() - 1;
  const auto& taken = run.taken[last];
  const auto found = std::find_if(taken.begin(), taken.end(),
                                  [&](const stage_snapshot_note& n) { return n.at == at; });
  // The attempt's start (restore_stage's last resort) may be in no note: nothing trained yet.
  auto note = found != taken.end() ? *found : stage_snapshot_note{};
  note.at = at;
  note.stage = slot;
  return note;
}

/// The copies whose share of the epoch ended before a restore that goes back into the epoch
/// train from the point again: what they reported no longer counts.
void withdraw_reports(job_master_state& st) {
  auto& run = *st.pipeline;
  for (auto& reported : run.reported) {
    if (!reported)
      continue;
    st.epoch_done.loss_sum -= reported->loss_sum;
    st.epoch_done.batches -= reported->steps;
    st.epoch_done.samples -= reported->samples;
    st.report.iterations -= reported->steps;
    run.split_steps -= reported->steps;
    for (std::size_t s = 0; s < run.busy_seconds.size() && s < reported->busy_seconds.size(); ++s)
      run.busy_seconds[s] -= reported->busy_seconds[s];
    reported.reset();
  }
  run.copies_trained = 0;
}

/// Where lost slot `s` goes back to: the latest point of the epoch (or its end, once trained)
/// that is held for every stage; else, once trained, the latest one within the epoch; else, in
/// the first epoch the job's nodes run (the job's start, or a resume's), that epoch's start,
/// where the lost stage starts again from the model the job started with (`from_start`).
struct restore_target {
  stage_point point;
  bool from_start = false;
};

std::optional<restore_target> restore_target_of(const job_master_state& st, std::uint32_t s) {
  const auto& run = *st.pipeline;
  const auto epoch = st.status.epoch;
  if (run.trained)
    if (const auto end = restore_point(run, s, epoch, true))
      return restore_target{*end};
  if (const auto within = restore_point(run, s, epoch, false))
    return restore_target{*within};
  if (epoch == st.checkpoints.resumed.epochs_done)
    return restore_target{{epoch, 0}, true};
  return std::nullopt;
}

/// A restore that goes back into the epoch (from its end, or before copies reported it ended):
/// the epoch trains again from there, and what was measured or reported of it no longer counts.
void reopen_epoch(job_master_state& st) {
  auto& run = *st.pipeline;
  if (run.trained) {
    run.trained = false;
    run.train_seconds -= seconds_between(st.epoch_started, st.round_started);
  }
  withdraw_reports(st);
}

/// The slots next to slot `s` in its own copy of the pipeline: the stages before and after.
std::vector<std::uint32_t> neighbours_in_copy(const pipeline_run& run, std::uint32_t s) {
  std::vector<std::uint32_t> out;
  const auto stage = s % run.stages();
  if (stage > 0)
    out.push_back(s - 1);
  if (stage + 1 < run.stages())
    out.push_back(s + 1);
  return out;
}

/// Where lost stage `s` goes: a node of the job that runs no stage and is still a member (a
/// spare), or else the node of a neighbouring stage whose memory budget (--memory-limit) also
/// holds the lost stage's share (LightDNN merges the stage into its neighbour).
std::optional<job_node> target_of(const job_master_state& st, const job_master_setup& setup,
                                  std::uint32_t s) {
  for (const auto& node : setup.nodes) {
    const auto id = node.status.node_id;
    if (!in_job(st, id) && st.members.count(id) > 0)
      return node;
  }
  const auto& run = *st.pipeline;
  const auto& stages = run.placement.stages;
  for (const auto t : neighbours_in_copy(run, s)) {
    const auto& node = st.members.at(run.stage_nodes[t]);
    std::uint64_t placed = stages[s].memory_bytes;
    for (std::size_t u = 0; u < stages.size(); ++u)
      if (run.stage_nodes[u] == node.status.node_id)
        placed += stages[u].memory_bytes;
    if (node.status.memory_limit == 0 || placed <= node.status.memory_limit)
      return node;
  }
  return std::nullopt;
}

/// Every stage runs again at the restore point: linked, every copy's first stage goes on (or
/// copy 1's evaluates the epoch); `undone` minibatches by copy are trained again.
void resume(self_ptr self, const job_master_setup& setup, const stage_point& point,
            const std::vector<std::uint64_t>& undone) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  const double took = seconds_between(*run.restoring, self->clock().now());
  run.restoring.reset();
  auto& r = st.report;
  ++r.pipeline.stage_restores;
  const auto redone = std::accumulate(undone.begin(), undone.end(), std::uint64_t{0});
  r.samples_redone += redone * run.placement.batch_size;
  r.restore_seconds = std::max(r.restore_seconds, took);
  log::info("job_master: job {} restored its pipeline (generation {}) at epoch {} step {} in "
            "{:.2f} s; {} minibatches are trained again", st.status.job_id, run.generation,
            point.epoch + 1, point.epoch_step, took, redone);
  report_status(self, setup);
  if (run.trained)
    return self->send(run.subnets.front(), stage_run{st.status.epoch, true, run.generation, 0});
  for (std::size_t first = 0; first < run.subnets.size(); first += run.stages())
    self->send(run.subnets[first],
               stage_run{st.status.epoch, false, run.generation, point.epoch_step});
}

/// `lost`'s node leaves the job for `target`, which now runs stage `s` (counted; logged as
/// what `restarts` it, `from` where).
void move_stage(self_ptr self, const member_lost& lost, std::uint32_t s, const job_node& target,
                const char* restarts, const std::string& from) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  ++st.report.nodes_lost;
  st.report.failure_detection_seconds =
    std::max(st.report.failure_detection_seconds, lost.silent_seconds);
  const auto target_id = target.status.node_id;
  const bool merged = in_job(st, target_id);
  st.nodes.erase(std::find(st.nodes.begin(), st.nodes.end(), lost.node_id));
  if (!merged)
    st.nodes.push_back(target_id);
  run.stage_nodes[s] = target_id;
  report_split(st);
  st.members.erase(lost.node_id);
  log::info("job_master: job {} lost stage {} with node {}; {} on node {} ({}{}){}",
            st.status.job_id, s + 1, lost.node_id, restarts, target_id, target.status.name,
            merged ? ", merged beside its neighbour" : "", from);
}

/// Before the first epoch: stage `s` starts on `target`, and the stages are linked again
/// once it runs (links sent to the lost one no longer count).
void restart_stage(self_ptr self, const job_master_setup& setup, const member_lost& lost,
                   std::uint32_t s, const job_node& target) {
  auto& run = *self->state.pipeline;
  if (run.subnets[s]) {  // it ran: counted among the ready ones
    run.subnets[s] = caf::actor{};
    --run.ready;
  }
  ++run.link_round;
  move_stage(self, lost, s, target, "before the first epoch, starts it again", "");
  assign_stage(self, setup, s, target, true, [self, setup] { stage_spawned(self, setup); });
}

} // namespace

void restore_stage(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  auto& st = self->state;
  auto& run = *st.pipeline;
  if (run.replaced)
    abandon_repartition(self);
  const auto fail = [&](const std::string& why) {
    ++st.report.nodes_lost;  // lost all the same, though not restored
    fail_job(self, setup,
             make_error(strom_error::node_lost,
                        fmt::format("node {} of a pipeline job was lost ({}); {}", lost.node_id,
                                    error_text(self->system(), lost.reason), why)));
  };
  const auto& stages = run.placement.stages;
  const auto lost_stages = std::count(run.stage_nodes.begin(), run.stage_nodes.end(),
                                      lost.node_id);
  const auto s = static_cast<std::uint32_t>(
    std::find(run.stage_nodes.begin(), run.stage_nodes.end(), lost.node_id)
    - run.stage_nodes.begin());
  if (run.restoring)
    return fail("another stage was being restored");
  if (lost_stages != 1)
    return fail(fmt::format("it ran {} stages, and only one is restored at a time",
                            lost_stages));
  const auto no_target = "no spare node to restore its stage on (strom submit --spares N), and "
                         "no neighbouring stage's node has the memory for it (--memory-limit)";
  if (st.status.state == "preparing") {
    if (const auto target = target_of(st, setup, s))
      return restart_stage(self, setup, lost, s, *target);
    return fail(fmt::format("the pipeline was starting, and {}", no_target));
  }
  const auto target = restore_target_of(st, s);
  if (!target)
    return fail(fmt::format("no snapshot of epoch {} is held for every stage yet",
                            st.status.epoch + 1));
  const auto spare = target_of(st, setup, s);
  if (!spare)
    return fail(no_target);
  const auto point = target->point;
  run.restoring = self->clock().now();
  run.epoch_restored = true;
  ++run.generation;
  // The copies the lost node held for its neighbours went with it.
  for (std::uint32_t t = 0; t < stages.size(); ++t)
    if (t != s && holder_of(t, run.stages()) == s)
      run.held[t].clear();
  if (point.epoch == st.status.epoch)
    reopen_epoch(st);
  if (target->from_start)
    move_stage(self, lost, s, *spare, "starts it again",
               fmt::format(" from the start of epoch {}, where this run began: none of the "
                           "stage's snapshots was held yet", point.epoch + 1));
  else
    move_stage(self, lost, s, *spare, "restores it",
               fmt::format(" from its snapshot at epoch {} step {}", point.epoch + 1,
                           point.epoch_step));
  // Answers still awaited: the re-spawned stage and every other stage's rollback.
  auto left = std::make_shared<std::size_t>(stages.size());
  auto undone = std::make_shared<std::vector<std::uint64_t>>(run.placement.pipelines, 0);
  const auto answered = [self, setup, left, undone, point](std::uint32_t slot) {
    return [self, setup, left, undone, point, slot](std::uint64_t steps) {
      auto& copy = (*undone)[slot / self->state.pipeline->stages()];
      copy = std::max(copy, steps);
      if (--*left == 0)
        link_stages(self, setup,
                    [self, setup, undone, point] { resume(self, setup, point, *undone); });
    };
  };
  const auto refused = [self, setup](const char* what, std::uint32_t stage) {
    return [self, setup, what, stage](caf::error& err) {
      fail_job(self, setup,
               make_error(code_for(err, strom_error::node_failed),
                          fmt::format("pipeline stage {} could not be {}: {}", stage + 1, what,
                                      error_text(self->system(), err))));
    };
  };
  const auto holder = run.subnets[holder_of(s, run.stages())];
  for (std::uint32_t other = 0; other < stages.size(); ++other)
    if (other != s)
      self
        ->request(run.subnets[other], setup.timeouts.prepare_timeout,
                  stage_rollback{run.generation, note_at(run, point, other),
                                 holder_of(other, run.stages()) == s})
        .then(answered(other), refused("rolled back", other));
  assign_stage(self, setup, s, *spare, target->from_start,
               [self, setup, s, holder, answered, refused, from_start = target->from_start,
                to = note_at(run, point, s)] {
    const auto& run = *self->state.pipeline;
    // Its neighbours in its copy, and the same stage of the other copies.
    auto neighbours = neighbours_in_copy(run, s);
    const auto stage = s % run.stages();
    for (auto copy = stage; copy < run.subnets.size(); copy += run.stages())
      if (copy != s)
        neighbours.push_back(copy);
    wire_stage(self, s, neighbours);
    if (from_start)  // it holds the model the run began with
      return answered(s)(0);
    self
      ->request(run.subnets[s], setup.timeouts.prepare_timeout, stage_restore{holder, to})
      .then(answered(s), refused("restored", s));
  });
}

} // namespace strom::actors::job_steps
