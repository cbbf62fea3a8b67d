#pragma once
// The set-up every training run shares, whatever runs the steps (one worker in a loop, or
// trainer actors): overrides, compute threads, data that fits the model, where to checkpoint.

#include <chrono>
#include <string>

#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/local_training.hpp"

namespace strom::runtime {

using training_clock = std::chrono::steady_clock;

/// Seconds from `start` until now.
double seconds_since(training_clock::time_point start);

/// Applies --epochs and --seed to the job, checks epochs and compute threads, and sets the
/// BLAS thread count; errors are prefixed with the job's source.
result<void> prepare_run(job_spec& job, const local_training_options& options);

/// Loads the job's data and checks that it fits `net` (sample size, label range).
result<compute::training_data> load_training_data(const job_spec& job, const compute::model& net);

/// DIR/JOBNAME.ckpt, or empty when no checkpoint directory is set.
std::string checkpoint_path(const local_training_options& options, const std::string& job_name);

} // namespace strom::runtime
