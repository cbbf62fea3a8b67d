#pragma once
// The set-up every training run shares, whatever runs the steps (one worker in a loop, or
// trainer actors): overrides, compute threads, data that fits the model, where to checkpoint.

#include <chrono>
#include <string>

#include "strom/compute/data/dataset_from_spec.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/local_training.hpp"
#include "strom/runtime/metrics_report.hpp"

namespace strom::runtime {

using training_clock = std::chrono::steady_clock;

/// Seconds from `start` until now.
double seconds_since(training_clock::time_point start);

/// Applies --epochs and --seed to the job, checks it (check_job) and sets the BLAS thread
/// count; errors are prefixed with the job's source.
result<void> prepare_run(job_spec& job, const local_training_options& options);

/// Loads the job's data and checks that it fits `net` (sample size, label range).
result<compute::training_data> load_training_data(const job_spec& job, const compute::model& net);

/// DIR/JOBNAME.ckpt, or empty when no checkpoint directory is set.
std::string checkpoint_path(const std::string& checkpoint_dir, const std::string& job_name);

using actors::epoch_totals;

/// Evaluates `trained` on `test` (unless empty) and, when `checkpoint` is set, saves it as
/// it stands after 0-based epoch `epoch`, `train_samples` samples into the run.
result<actors::test_result> check_epoch(compute::replica& trained, const compute::dataset& test,
                                        const job_spec& job, const std::string& checkpoint,
                                        std::uint32_t epoch, std::uint64_t train_samples);

/// Ends epoch `epoch` (0-based) of report.epochs: adds its totals to the report, evaluates
/// `trained` on `test` (unless empty), tells the observer and, when `checkpoint` is set,
/// saves `trained` there.
result<void> end_epoch(training_report& report, std::uint32_t epoch, const epoch_totals& totals,
                       compute::replica& trained, const compute::dataset& test,
                       training_observer& observer, const job_spec& job,
                       const std::string& checkpoint);

/// Fills the run-wide figures once the last epoch has ended.
void end_run(training_report& report, training_clock::time_point run_start,
             const std::string& checkpoint);

} // namespace strom::runtime
