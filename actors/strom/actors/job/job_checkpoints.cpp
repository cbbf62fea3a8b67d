// A job_master's checkpoints (with the scheduler's --state-dir): taken between epochs through
// the job's checkpoint_keeper; and the resume of a job, after the scheduler's restart or from
// the checkpoint it was submitted with (--resume), through the same keeper.
#include "strom/actors/job/job_checkpoints.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master_steps.hpp"
#include "strom/actors/cluster/checkpoint_keeper.hpp"
#include "strom/actors/sharing/job_topology.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

bool keeps_checkpoints(const job_master_setup& setup) {
  return setup.store || setup.submission.resume.epochs_done > 0;
}

/// Whether the epoch that just ended is one to checkpoint (--checkpoint-every).
bool checkpoint_due(const job_master_state& st, const job_master_setup& setup) {
  // A pipeline job's first stage keeps the network for the keeper as its epoch ends
  // (job_pipeline.cpp).
  return setup.store && st.checkpoints.keeper && !st.pipeline
         && st.report.iterations >= st.checkpoints.checkpointed_iteration + setup.checkpoint_every;
}

void checkpointed(self_ptr self, const job_master_setup& setup, std::uint32_t epochs_done,
                  std::uint64_t bytes) {
  auto& st = self->state;
  st.checkpoints.checkpointed_iteration = st.report.iterations;
  // The run's wall time so far travels with it: a job taken up after the scheduler's
  // restart counts on from there (take_up).
  st.report.wall_seconds = seconds_between(st.submitted, self->clock().now());
  self->send(setup.scheduler, job_checkpointed{st.status.job_id, epochs_done, st.report});
  log::info("job_master: job {} checkpointed after epoch {} ({} bytes)", st.status.job_id,
            epochs_done, bytes);
}

/// Between two epochs, while nothing trains: the keeper saves the first live node's snapshot
/// and the scheduler the job's progress; then the next epoch starts. A checkpoint that fails
/// is logged and training goes on: the job is no worse off than without a state directory.
void take_checkpoint(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  const auto epoch = st.status.epoch;
  // The agent travels as a message element of its own: untyped (protocol/roles.hpp).
  const auto source = caf::actor_cast<caf::actor>(st.members.at(st.nodes.front()).agent);
  self->request(st.checkpoints.keeper, setup.timeouts.restore_timeout, checkpoint_atom_v,
                st.status.job_id, source)
    .then(
      [self, setup, epoch](const snapshot_sent& sent) {
        if (self->state.outcome)
          return;
        checkpointed(self, setup, epoch, sent.bytes);
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

/// A job resumed after the scheduler's restart: every node takes the checkpoint from the
/// keeper (the way a joiner takes a live node's snapshot), then training goes on where the
/// checkpoint left it. Without a checkpoint the job starts over.
void resume_training(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (st.status.epoch == 0)
    return begin_training(self, setup);
  auto pending = std::make_shared<std::size_t>(st.nodes.size());
  const auto source = caf::actor_cast<caf::actor>(st.checkpoints.keeper);  // a message element
  // A node lost meanwhile starts the job again without it (start_when_prepared).
  const auto current = [self, attempt = st.start_attempt] {
    return !self->state.outcome && self->state.start_attempt == attempt;
  };
  for (auto id : st.nodes)
    request_while_alive(self, st.awaiting, id, st.members.at(id).agent,
                        setup.timeouts.restore_timeout, restore_atom_v, st.status.job_id, source)
      .then(
        [self, setup, pending, current](const snapshot_sent&) {
          if (--*pending == 0 && current())
            begin_training(self, setup);
        },
        [self, setup, id, current](caf::error& err) {
          if (!current())
            return;
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::snapshot_failed),
                              fmt::format("node {} could not take the job's checkpoint: {}", id,
                                          error_text(self->system(), err))));
        });
}

/// A job that goes on from a checkpoint (after the scheduler's restart, or submitted with
/// --resume) starts from `report` with `epochs_done` epochs done, and the run's wall time so
/// far.
void take_up(self_ptr self, std::uint32_t epochs_done, const training_report& report) {
  auto& st = self->state;
  st.checkpoints.carried = st.report = report;
  st.report.topology = summary_of(st.plan, st.nodes.size());
  st.status.epoch = epochs_done;
  st.checkpoints.checkpointed_iteration = st.report.iterations;
  st.submitted -= std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(report.wall_seconds));
}

/// Spawns the job's checkpoint keeper, which serves the checkpoint the job goes on from
/// first: the store's after the scheduler's restart, else the one it was submitted with.
void start_keeping(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  checkpoint_keeper_setup keeping{setup.job_id, setup.store, setup.timeouts.restore_timeout, {}};
  const auto& submitted = setup.submission.resume;
  if (setup.resume && setup.resume->epochs_done > 0) {
    if (auto saved = setup.store->load_checkpoint(setup.job_id)) {
      st.checkpoints.resumed = {setup.resume->epochs_done, setup.resume->report, *saved};
      keeping.latest = std::move(*saved);
      take_up(self, setup.resume->epochs_done, setup.resume->report);
    } else {  // unusable: the job starts over rather than fail
      log::warning("job_master: job {} starts over: {}", setup.job_id, saved.err().message);
    }
  }
  if (!keeping.latest && submitted.epochs_done > 0) {
    st.checkpoints.resumed = submitted;
    keeping.latest = submitted.snapshot;
    take_up(self, submitted.epochs_done, submitted.report);
  }
  if (setup.resume) {  // the scheduler's restarts, and the job's own with their faults
    st.report.scheduler_restarts = setup.resume->restarts;
    st.report.job_restarts = setup.resume->job_restarts;
    carry_faults(st.report, setup.resume->report);
  }
  st.checkpoints.keeper =
    caf::actor_cast<keeper_actor>(self->spawn<caf::linked>(checkpoint_keeper, std::move(keeping)));
}

} // namespace strom::actors::job_steps
