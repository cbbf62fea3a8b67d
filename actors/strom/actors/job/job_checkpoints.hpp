#pragma once
// The job_master's checkpoints (job_checkpoints.cpp): its checkpoint_keeper (with the
// scheduler's --state-dir, or for a job submitted with --resume), how far the latest
// checkpoint got, and the steps that take checkpoints and resume a job from one.

#include <cstdint>

#include <caf/actor.hpp>

#include "strom/actors/job/job_master_fwd.hpp"
#include "strom/actors/job/training_report.hpp"
#include "strom/actors/protocol/clients.hpp"
#include "strom/actors/protocol/roles.hpp"

namespace strom::actors {

/// What a job_master keeps of its checkpoints.
struct job_checkpoint_state {
  keeper_actor keeper;  ///< its checkpoint_keeper; null without a store or a resume
  std::uint64_t checkpointed_iteration = 0;  ///< a worker's steps at the latest checkpoint
  training_report carried;  ///< the report as saved before the scheduler's restart
  /// The checkpoint the job went on from (the store's or the submission's), which servers
  /// and pipeline stages start from as the keeper serves it to trainers; empty: none.
  job_resume resumed;
};

} // namespace strom::actors

namespace strom::actors::job_steps {

/// Whether the job has a keeper (a store to checkpoint into, or a checkpoint to resume from).
bool keeps_checkpoints(const job_master_setup& setup);

bool checkpoint_due(const job_master_state& st, const job_master_setup& setup);

void take_checkpoint(self_ptr self, const job_master_setup& setup);

/// The keeper saved the job's checkpoint after `epochs_done` epochs (`bytes`): the scheduler
/// records how far the job got, with its report as it stands.
void checkpointed(self_ptr self, const job_master_setup& setup, std::uint32_t epochs_done,
                  std::uint64_t bytes);

void resume_training(self_ptr self, const job_master_setup& setup);

void start_keeping(self_ptr self, const job_master_setup& setup);

} // namespace strom::actors::job_steps
