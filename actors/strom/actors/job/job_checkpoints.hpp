#pragma once
// The job_master's checkpoints (job_checkpoints.cpp, with the scheduler's --state-dir): its
// checkpoint_keeper, how far the latest checkpoint got, and the steps that take checkpoints
// and resume a job after the scheduler's restart.

#include <cstdint>

#include <caf/actor.hpp>

#include "strom/actors/job/job_master_fwd.hpp"
#include "strom/actors/job/training_report.hpp"
#include "strom/actors/protocol/roles.hpp"

namespace strom::actors {

/// What a job_master keeps of its checkpoints.
struct job_checkpoint_state {
  keeper_actor keeper;  ///< its checkpoint_keeper; null without a store
  std::uint64_t checkpointed_iteration = 0;  ///< a worker's steps at the latest checkpoint
  training_report carried;  ///< the report as saved before the scheduler's restart
};

} // namespace strom::actors

namespace strom::actors::job_steps {

bool checkpoint_due(const job_master_state& st, const job_master_setup& setup);

void take_checkpoint(self_ptr self, const job_master_setup& setup);

void resume_training(self_ptr self, const job_master_setup& setup);

void start_keeping(self_ptr self, const job_master_setup& setup);

} // namespace strom::actors::job_steps
