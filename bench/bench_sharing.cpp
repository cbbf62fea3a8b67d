// Update sharing against lossless synchronous data parallelism, on jobs nobody tuned sharing
// for: each job file of bench/sharing_jobs/ (no `distributed` section) trained by W workers
// with the default sharing and by the same W workers pushing to one parameter server
// (kvstore, dist_sync: every step one optimizer step on the mean of the workers' gradients),
// over several seeds. Prints one JSON object per run, one per job with the mean accuracies,
// their gap and the share of dense bytes sharing sent, and a summary with the worst gap.
// Usage: bench_sharing [--seeds N] [--workers W] [--nodes K] [JOB...]
//   (default: 3 seeds, 4 workers on one node, every job of bench/sharing_jobs/)

#include <fmt/format.h>

#include "json_line.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"

using strom::bench::print_json;
using strom::bench::rounded;

namespace {

/// One training run's figures.
struct run_figures {
  double accuracy = 0.0;
  double bytes_fraction = 0.0;  ///< update bytes sent / dense fp32 bytes (sharing only)
};

/// How the workers train together: the default sharing or lossless synchronous DP.
enum class scheme { sharing, sync_dp };

strom::result<run_figures> run_once(const std::string& path, std::uint64_t seed, scheme how,
                                    std::uint32_t nodes, std::uint32_t workers) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job)
    return job.err();
  runtime::local_training_options options;
  options.seed = seed;
  runtime::cluster_shape shape{nodes, workers};
  if (how == scheme::sync_dp) {
    options.mode = schema::TrainingMode::KVSTORE;
    options.kvstore = schema::KvStoreSync::DIST_SYNC;
    shape.servers = 1;
  }
  auto report = runtime::train_on_cluster(*job, options, shape);
  if (!report)
    return report.err();
  const run_figures figures{
    report->test_accuracy,
    report->dense_bytes_equivalent
      ? static_cast<double>(report->bytes_sent) / static_cast<double>(report->dense_bytes_equivalent)
      : 0.0};
  print_json({{"bench", "sharing_run"}, {"job", report->job},
              {"scheme", how == scheme::sharing ? "sharing" : "sync_dp"}, {"seed", seed},
              {"nodes", nodes}, {"workers", workers},
              {"test_accuracy", rounded(figures.accuracy, 4)},
              {"bytes_fraction", rounded(figures.bytes_fraction, 5)},
              {"train_seconds", rounded(report->train_seconds, 2)}});
  return figures;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values)
    sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

} // namespace

int main(int argc, char** argv) {
  std::uint64_t seeds = 3;
  std::uint32_t workers = 4;
  std::uint32_t nodes = 1;
  std::vector<std::string> jobs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
      seeds = std::stoull(argv[++i]);
    else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
      workers = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
      nodes = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else
      jobs.emplace_back(argv[i]);
  }
  if (jobs.empty()) {
    for (const auto& entry :
         std::filesystem::directory_iterator(STROM_SOURCE_DIR "/bench/sharing_jobs"))
      if (entry.path().extension() == ".job")
        jobs.push_back(entry.path().string());
    std::sort(jobs.begin(), jobs.end());
  }
  double worst_gap = 0.0;
  std::string worst_job;
  for (const auto& path : jobs) {
    std::vector<double> sync_dp, sharing, bytes;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      for (const scheme how : {scheme::sync_dp, scheme::sharing}) {
        auto figures = run_once(path, seed, how, nodes, workers);
        if (!figures) {
          fmt::print(stderr, "{}: {}\n", path, figures.err().message);
          return 1;
        }
        (how == scheme::sync_dp ? sync_dp : sharing).push_back(figures->accuracy);
        if (how == scheme::sharing)
          bytes.push_back(figures->bytes_fraction);
      }
    }
    const double gap = mean(sharing) - mean(sync_dp);
    const auto name = std::filesystem::path(path).stem().string();
    print_json({{"bench", "sharing_job"}, {"job", name}, {"seeds", seeds},
                {"sync_dp_accuracy", rounded(mean(sync_dp), 4)},
                {"sharing_accuracy", rounded(mean(sharing), 4)},
                {"gap_points", rounded(100.0 * gap, 2)},
                {"bytes_fraction", rounded(mean(bytes), 5)}});
    if (worst_job.empty() || gap < worst_gap) {
      worst_gap = gap;
      worst_job = name;
    }
  }
  print_json({{"bench", "sharing"}, {"jobs", jobs.size()},
              {"worst_gap_points", rounded(100.0 * worst_gap, 2)}, {"worst_job", worst_job}});
  return 0;
}
