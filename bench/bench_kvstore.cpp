// Parameter servers against gradient sharing on this machine: the same job trained by 2
// worker nodes that push to 1 server node (kvstore dist_sync, fp32 pushes, optimizer on the
// server) and by the same 2 nodes sharing threshold-encoded updates, all in-process clusters
// over loopback, alternated ROUNDS times in one run so that both see the same machine load.
// Prints one JSON object per run and a summary: median samples/s of each, their ratio, and
// where the kvstore step's time goes (bytes a worker moves a step; the step time beyond the
// shared run's). bench/compare_kvstore.sh puts PyTorch DDP beside it.
// With --replicas R, the kvstore run has R server nodes holding every key range R times
// (chain replication): what replication costs a step.
// Usage: bench_kvstore [--rounds N] [--epochs E] [--compression none|2bit|threshold]
//                      [--replicas R] [JOB]

#include <fmt/format.h>

#include "json_line.hpp"
#include "median.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"

using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

/// Worker nodes of both runs (one worker each).
constexpr std::uint32_t worker_nodes = 2;

struct run_figures {
  double samples_per_second = 0.0;
  double seconds_per_step = 0.0;     ///< train time over one worker's steps
  double bytes_per_step = 0.0;       ///< pushed and taken back by one worker a step
};

/// Trains a fresh copy of the job, in kvstore mode with `compression` and `replicas` server
/// nodes holding every range that often, or shared, and prints it.
strom::result<run_figures> run_once(const std::string& path, std::optional<std::uint32_t> epochs,
                                    std::optional<strom::schema::KvCompression> compression,
                                    std::uint32_t replicas) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job)
    return job.err();
  runtime::local_training_options options;
  options.epochs = epochs;
  if (compression) {
    options.mode = schema::TrainingMode::KVSTORE;
    options.compression = *compression;
    options.replicas = replicas;
  }
  auto report =
    runtime::train_on_cluster(*job, options, {worker_nodes, 1, compression ? replicas : 0});
  if (!report)
    return report.err();
  // A worker's updater steps over the run: its steps.
  const double steps = static_cast<double>(std::max<std::uint64_t>(report->iterations, 1));
  run_figures figures{report->train_samples_per_second, report->train_seconds / steps,
                      static_cast<double>(report->push_bytes + report->pull_bytes)
                        / (steps * worker_nodes)};
  print_json({{"bench", "kvstore_run"}, {"mode", report->mode}, {"epochs", report->epochs},
              {"train_seconds", rounded(report->train_seconds, 3)},
              {"samples_per_second", rounded(report->train_samples_per_second, 1)},
              {"test_accuracy", rounded(report->test_accuracy, 4)},
              {"push_bytes", report->push_bytes}, {"push_dense_bytes", report->push_dense_bytes},
              {"pull_bytes", report->pull_bytes}, {"bytes_sent", report->bytes_sent},
              {"replicas", report->replicas}});
  return figures;
}

} // namespace

int main(int argc, char** argv) {
  std::uint32_t rounds = 3;
  std::optional<std::uint32_t> epochs = 2;
  auto compression = strom::schema::KvCompression::NONE;
  std::uint32_t replicas = 1;
  std::string path = STROM_SOURCE_DIR "/examples/fashion_mlp.job";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc)
      epochs = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--replicas") == 0 && i + 1 < argc)
      replicas = std::max(1u, static_cast<std::uint32_t>(std::stoul(argv[++i])));
    else if (std::strcmp(argv[i], "--compression") == 0 && i + 1 < argc) {
      const std::string name = argv[++i];
      compression = name == "2bit"        ? strom::schema::KvCompression::TWO_BIT
                    : name == "threshold" ? strom::schema::KvCompression::THRESHOLD
                                          : strom::schema::KvCompression::NONE;
    } else
      path = argv[i];
  }
  std::vector<run_figures> shared;
  std::vector<run_figures> kvstore;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (const bool kv : {false, true}) {
      auto figures =
        run_once(path, epochs, kv ? std::optional{compression} : std::nullopt, replicas);
      if (!figures) {
        fmt::print(stderr, "{}\n", figures.err().message);
        return 1;
      }
      (kv ? kvstore : shared).push_back(*figures);
    }
  }
  const auto median_of = [](const std::vector<run_figures>& runs, double run_figures::*field) {
    std::vector<double> values;
    for (const auto& r : runs)
      values.push_back(r.*field);
    return median(values);
  };
  const double kv = median_of(kvstore, &run_figures::samples_per_second);
  const double sh = median_of(shared, &run_figures::samples_per_second);
  const double kv_step = median_of(kvstore, &run_figures::seconds_per_step);
  const double sh_step = median_of(shared, &run_figures::seconds_per_step);
  print_json({{"bench", "kvstore"}, {"impl", "strom"}, {"job", path}, {"rounds", rounds},
              {"worker_nodes", worker_nodes}, {"server_nodes", replicas}, {"replicas", replicas},
              {"kvstore_samples_per_second", rounded(kv, 1)},
              {"shared_samples_per_second", rounded(sh, 1)},
              {"ratio_kvstore_to_shared", rounded(kv / sh, 3)},
              {"kvstore_ms_per_step", rounded(kv_step * 1e3, 3)},
              {"shared_ms_per_step", rounded(sh_step * 1e3, 3)},
              {"kvstore_bytes_per_worker_step",
               rounded(median_of(kvstore, &run_figures::bytes_per_step), 0)}});
  return 0;
}
