#pragma once
// --checkpoint-dir, --keep-checkpoints and --resume, which `strom train`, `strom submit` and
// `strom launch` take: each run saves into a new run folder under the directory and keeps its
// last K epoch checkpoints and its best (runtime/job/checkpoint_runs.hpp); a resumed run goes
// on from a checkpoint, its job included (runtime/job/checkpoint_resume.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint_resume.hpp"
#include "strom/runtime/job/local_training.hpp"

namespace strom::cli {

/// `spec` with the three options added after its own; `dir_help` says where --checkpoint-dir
/// is and what it defaults to.
command_spec with_checkpoint_options(command_spec spec, const std::string& dir_help);

/// Reads --keep-checkpoints into `options`; errors name the option and value.
result<void> read_keep_checkpoints(const arguments& args,
                                   runtime::local_training_options& options);

/// Refuses a command line with neither a JOB file nor --resume PATH, or with both.
result<void> check_job_or_resume(const arguments& args);

/// The job a command runs: its JOB file or, with --resume PATH, the job of the checkpoint
/// PATH names, which then goes into `options` to go on from (its progress holds the run's
/// workers and nodes); unless --checkpoint-dir was given, the resumed run saves beside the
/// run it came from.
result<runtime::job_spec> read_job_or_resume(const arguments& args,
                                             runtime::local_training_options& options);

} // namespace strom::cli
