// Data-parallel speed-up on this machine: the same job trained by one worker (a one-node
// cluster's lone trainer) and by two workers sharing threshold-encoded updates (one node),
// alternated ROUNDS times in one run so that both see the same machine load. The whole job by
// default: early epochs send denser updates than late ones, so one epoch understates the
// speed-up.
// Prints one JSON object per run and a summary with the median samples/s of each and their
// ratio. Usage: bench_parallel [--rounds N] [--epochs E] [JOB] (default
// examples/fashion_mlp.job, its own epochs).

#include <fmt/format.h>

#include "json_line.hpp"
#include "median.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/cluster/cluster_training.hpp"

using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

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
  print_json({{"bench", "parallel_run"}, {"job", report->job}, {"workers", workers},
              {"epochs", report->epochs}, {"train_seconds", rounded(report->train_seconds, 3)},
              {"samples_per_second", rounded(report->train_samples_per_second, 1)},
              {"test_accuracy", rounded(report->test_accuracy, 4)},
              {"bytes_sent", report->bytes_sent},
              {"dense_bytes_equivalent", report->dense_bytes_equivalent}});
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
  print_json({{"bench", "parallel"}, {"impl", "strom"}, {"job", path}, {"rounds", rounds},
              {"epochs", trained_epochs}, {"samples_per_second_1_worker", rounded(one, 1)},
              {fmt::format("samples_per_second_{}_workers", parallel_workers), rounded(two, 1)},
              {"ratio", rounded(two / one, 3)}});
  return 0;
}
