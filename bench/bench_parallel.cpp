// Data-parallel speed-up on this machine: the same job trained by one worker (a one-node
// cluster's lone trainer) and by two workers sharing threshold-encoded updates (one node),
// alternated ROUNDS times in one run so that both see the same machine load. The whole job by
// default: early epochs send denser updates than late ones, so one epoch understates the
// speed-up.
// Prints one JSON object per run and a summary with the median samples/s of each and their
// ratio. Usage: bench_parallel [--rounds N] [--epochs E] [JOB] (default
// examples/fashion_mlp.job, its own epochs).

#include <fmt/format.h>

#include "median.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/local_training.hpp"
#include "strom/runtime/cluster_training.hpp"

using strom::bench::median;

namespace {

/// Workers of the parallel run: one per core of the 2-core machines this targets.
constexpr std::uint32_t parallel_workers = 2;

/// Trains a fresh copy of the job with `workers` on one node and prints the run.
strom::result<strom::runtime::training_report> run_once(const std::string& path,
                                                        std::optional<std::uint32_t> epochs,
                                                        std::uint32_t workers) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job)
    return job.err();
  runtime::local_training_options options;
  options.epochs = epochs;
  auto report = runtime::train_on_cluster(*job, options, {1, workers});
  if (!report)
    return report.err();
  fmt::print("{{\"bench\":\"parallel_run\",\"job\":\"{}\",\"workers\":{},\"epochs\":{},"
             "\"train_seconds\":{:.3f},\"samples_per_second\":{:.1f},\"test_accuracy\":{:.4f},"
             "\"bytes_sent\":{},\"dense_bytes_equivalent\":{}}}\n",
             report->job, workers, report->epochs, report->train_seconds,
             report->train_samples_per_second, report->test_accuracy, report->bytes_sent,
             report->dense_bytes_equivalent);
  std::fflush(stdout);
  return *report;
}

} // namespace

int main(int argc, char** argv) {
  std::uint32_t rounds = 3;
  std::optional<std::uint32_t> epochs;
  std::string path = STROM_SOURCE_DIR "/examples/fashion_mlp.job";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc)
      epochs = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else
      path = argv[i];
  }
  std::vector<double> single;
  std::vector<double> parallel;
  std::uint32_t trained_epochs = 0;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (const std::uint32_t workers : {1u, parallel_workers}) {
      auto report = run_once(path, epochs, workers);
      if (!report) {
        fmt::print(stderr, "{}\n", report.err().message);
        return 1;
      }
      (workers == 1 ? single : parallel).push_back(report->train_samples_per_second);
      trained_epochs = report->epochs;
    }
  }
  const double one = median(single);
  const double two = median(parallel);
  fmt::print("{{\"bench\":\"parallel\",\"impl\":\"strom\",\"job\":\"{}\",\"rounds\":{},"
             "\"epochs\":{},\"samples_per_second_1_worker\":{:.1f},"
             "\"samples_per_second_{}_workers\":{:.1f},\"ratio\":{:.3f}}}\n",
             path, rounds, trained_epochs, one, parallel_workers, two, two / one);
  return 0;
}
