#pragma once
// --checkpoint-dir, --no-checkpoints, --keep-checkpoints and --resume, which `strom train`,
// `strom submit` and `strom launch` take: each run saves into a new run folder under the
// directory (`checkpoints` unless told otherwise) and keeps its last K epoch checkpoints and
// its best (runtime/job/checkpoint_runs.hpp); a resumed run goes on from a checkpoint, its job
// included (runtime/job/checkpoint_resume.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint_resume.hpp"
#include "strom/runtime/job/local_training.hpp"

namespace strom::cli {

/// Where every command that trains saves unless told otherwise (--checkpoint-dir, or
/// --no-checkpoints), as PyTorch Lightning saves by default: a run a user stops can go on.
inline constexpr const char* default_checkpoint_dir = "checkpoints";

/// `spec` with the four options added after its own; `dir_help` says where --checkpoint-dir
/// is.
command_spec with_checkpoint_options(command_spec spec, const std::string& dir_help);

/// Reads --checkpoint-dir and --no-checkpoints (refused together) into `options`: the folder,
/// none, or default_checkpoint_dir. Before read_job_or_resume, which puts a resumed run beside
/// the run it came from unless either was given.
result<void> read_checkpoint_dir(const arguments& args, runtime::local_training_options& options);

/// Reads --keep-checkpoints into `options`; errors name the option and value.
result<void> read_keep_checkpoints(const arguments& args,
                                   runtime::local_training_options& options);

/// Refuses a command line with neither a JOB file nor --resume PATH, or with both.
result<void> check_job_or_resume(const arguments& args);

/// The job a command runs: its JOB file or, with --resume PATH, the job of the checkpoint
/// PATH names, which then goes into `options` to go on from (its progress holds the run's
/// workers and nodes); unless --checkpoint-dir or --no-checkpoints was given, the resumed run
/// saves beside the run it came from.
result<runtime::job_spec> read_job_or_resume(const arguments& args,
                                             runtime::local_training_options& options);

} // namespace strom::cli
