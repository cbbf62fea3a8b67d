#pragma once
// The job_master's types as its parts' headers name them (job_kvstore.hpp, job_pipeline.hpp,
// job_stall.hpp, job_checkpoints.hpp): each part's state is a member of job_master_state
// (job_master.hpp), and its steps take the job_master, so the two only meet declared.

#include <caf/fwd.hpp>

namespace strom::actors {

struct job_master_state;
struct job_master_setup;
struct job_node;

namespace job_steps {

using self_ptr = caf::stateful_actor<job_master_state>*;

} // namespace job_steps

} // namespace strom::actors
