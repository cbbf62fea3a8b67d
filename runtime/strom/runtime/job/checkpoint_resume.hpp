#pragma once
// A run that goes on from a checkpoint (strom train --resume, strom submit --resume): which
// checkpoint a path names, and that checkpoint as what a job submission carries. The nodes
// restore the model from it the way they restore a job after the scheduler's restart
// (actors/job/job_checkpoints.hpp): parameters, updater state, layer state, the step count
// and epoch that the learning-rate schedule and the data order follow.

#include <string>

#include "strom/actors/protocol/clients.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// A checkpoint to go on from, read and checked.
struct resume_point {
  std::string path;  ///< the checkpoint file
  checkpoint_contents saved;
};

/// Reads the checkpoint `path` names: the file itself; or, in a folder (a --checkpoint-dir,
/// its JOBNAME folder or a run-N folder), the latest epoch checkpoint of the newest run that
/// has one. Errors name the path and what is wrong.
result<resume_point> find_resume_point(const std::string& path);

/// Where a run resumed from `checkpoint_path` saves its checkpoints unless told: the
/// --checkpoint-dir of the run it came from (a new run-N beside it), else `fallback`.
std::string resumed_checkpoint_dir(const std::string& checkpoint_path,
                                   const std::string& fallback);

/// What a submission of `job` (the checkpoint's job with the run's overrides applied) carries
/// to go on from `saved`. Refuses, naming the checkpoint, a job with no epochs left to train
/// and a checkpoint whose buffers do not fit the job's network.
result<actors::job_resume> job_resume_of(const job_spec& job, const checkpoint_contents& saved);

} // namespace strom::runtime
