#pragma once
// --topology, --fanout, --mode and --averaging-frequency, which `strom train` and `strom
// submit` both take: they override the job file's distributed fields of the same names like
// --epochs does its field.

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/local_training.hpp"

namespace strom::cli {

/// `spec` with the options added after its own (a function: command tables are built
/// during static initialisation).
command_spec with_distribution_options(command_spec spec);

/// Reads the options into `overrides`; errors name the option and value.
result<void> read_distribution_flags(const arguments& args,
                                     runtime::local_training_options& overrides);

} // namespace strom::cli
