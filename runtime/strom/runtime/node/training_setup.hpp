#pragma once
// The set-up every node's training shares: overrides, compute threads, data that fits the
// model, where to checkpoint, and the evaluation (and checkpoint) after an epoch.

#include <chrono>
#include <string>

#include "strom/actors/protocol/job_control.hpp"
#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/job/metrics_report.hpp"

namespace strom::runtime {

using training_clock = std::chrono::steady_clock;

/// Seconds from `start` until now.
double seconds_since(training_clock::time_point start);

/// Applies --epochs and --seed to the job, checks it (check_job) and sets the BLAS thread
/// count; errors are prefixed with the job's source.
result<void> prepare_run(job_spec& job, const local_training_options& options);

/// Loads the job's data (the training and the test set), unchecked.
result<compute::training_data> load_job_data(const job_spec& job);

/// Checks that `data` fits a network of `input_floats` floats a sample and `classes` outputs
/// (sample size, label range).
result<void> check_training_data(const job_spec& job, const compute::training_data& data,
                                 std::size_t input_floats, std::size_t classes);

/// Loads the job's data and checks it (check_training_data).
result<compute::training_data> load_training_data(const job_spec& job, std::size_t input_floats,
                                                  std::size_t classes);

using actors::epoch_totals;

/// Evaluates `trained` on `test` (unless empty) and, when the plan names a folder, saves it
/// as it stands after 0-based epoch `epoch`, `train_samples` samples into the run
/// (checkpoint_runs.hpp); the check names the checkpoint saved.
result<actors::epoch_check> check_epoch(compute::replica& trained, const compute::dataset& test,
                                        const job_spec& job, const checkpoint_plan& checkpoints,
                                        std::uint32_t epoch, std::uint64_t train_samples);

} // namespace strom::runtime
