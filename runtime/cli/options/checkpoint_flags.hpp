#pragma once
// --checkpoint-dir and --keep-checkpoints, which `strom train` and `strom submit` both take:
// each run saves into a new run folder under the directory and keeps its last K epoch
// checkpoints and its best (runtime/job/checkpoint_runs.hpp).

#include <string>

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/local_training.hpp"

namespace strom::cli {

/// `spec` with the two options added after its own; `dir_help` says where --checkpoint-dir
/// is and what it defaults to.
command_spec with_checkpoint_options(command_spec spec, const std::string& dir_help);

/// Reads --keep-checkpoints into `options`; errors name the option and value.
result<void> read_keep_checkpoints(const arguments& args,
                                   runtime::local_training_options& options);

} // namespace strom::cli
