#pragma once
// --batch-size and --learning-rate, which `strom train` and `strom submit` take beside --epochs
// and --seed: they override the job file's training fields of the same names, as Horovod's
// and torchrun's scripts take them on the command line.

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/local_training.hpp"

namespace strom::cli {

option_spec batch_size_option();
option_spec learning_rate_option();

/// Reads the options into `overrides`; errors name the option and value.
result<void> read_training_flags(const arguments& args,
                                 runtime::local_training_options& overrides);

} // namespace strom::cli
