// Speed-aware against speed-blind pipeline partitioning (issue #20, LightDNN's point): the
// same job as a 2-stage pipeline on 2 in-process nodes of which one computes half as fast
// (--node-speeds, a testing aid that waits after each computation), once with the slow node
// first and once second, each split by the nodes' speeds (distributed.partition speedAware)
// and as if both were equally fast (speedBlind), alternated ROUNDS times in one run so that
// all see the same machine load. Prints one JSON object per run and a summary: the median
// samples/s of each, how far the two node orders are apart with each partition (the aware
// split follows the fast node, so its orders should be close), and aware over blind.
// Usage: bench_pipeline_speeds [--rounds N] [--epochs E] [JOB]

#include <fmt/format.h>

#include "json_line.hpp"
#include "median.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"

using strom::bench::json;
using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

/// The slow node's speed factor.
constexpr double slow = 0.5;

/// One run: the job as a pipeline on 2 nodes of `speeds`, split by `partition`; its samples/s.
strom::result<double> run_once(const std::string& path, std::uint32_t epochs,
                               const std::vector<double>& speeds,
                               strom::schema::StagePartition partition) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job)
    return job.err();
  job->builder().getDistributed().setPartition(partition);
  runtime::local_training_options options;
  options.epochs = epochs;
  options.mode = schema::TrainingMode::PIPELINE;
  runtime::cluster_shape shape;
  shape.nodes = 2;
  for (double factor : speeds)
    shape.node_speeds.push_back({factor});
  auto report = runtime::train_on_cluster(*job, options, shape);
  if (!report)
    return report.err();
  std::string split;
  for (const auto& layers : report->pipeline.stage_layers)
    split += fmt::format("[{},{})", layers.front(), layers.back());
  print_json(
    {{"bench", "pipeline_speeds_run"},
     {"partition",
      partition == schema::StagePartition::SPEED_AWARE ? "speed_aware" : "speed_blind"},
     {"node_speeds", json::array({speeds[0], speeds[1]})}, {"stage_layers", split},
     {"samples_per_second", rounded(report->train_samples_per_second, 1)},
     {"test_accuracy", rounded(report->test_accuracy, 4)},
     {"bubble_fraction", rounded(report->pipeline.bubble_fraction, 3)}});
  return report->train_samples_per_second;
}

} // namespace

int main(int argc, char** argv) {
  using strom::schema::StagePartition;
  std::uint32_t rounds = 3;
  std::uint32_t epochs = 1;
  std::string path = STROM_SOURCE_DIR "/examples/fashion_mlp.job";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc)
      epochs = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else
      path = argv[i];
  }
  const std::vector<std::vector<double>> orders{{1.0, slow}, {slow, 1.0}};
  std::map<std::pair<StagePartition, std::size_t>, std::vector<double>> runs;
  for (std::uint32_t round = 0; round < rounds; ++round)
    for (const auto partition : {StagePartition::SPEED_AWARE, StagePartition::SPEED_BLIND})
      for (std::size_t order = 0; order < orders.size(); ++order) {
        auto samples = run_once(path, epochs, orders[order], partition);
        if (!samples) {
          fmt::print(stderr, "{}\n", samples.err().message);
          return 1;
        }
        runs[{partition, order}].push_back(*samples);
      }
  const auto at = [&](StagePartition partition, std::size_t order) {
    return median(runs[{partition, order}]);
  };
  const double aware_fast_first = at(StagePartition::SPEED_AWARE, 0);
  const double aware_slow_first = at(StagePartition::SPEED_AWARE, 1);
  const double blind_fast_first = at(StagePartition::SPEED_BLIND, 0);
  const double blind_slow_first = at(StagePartition::SPEED_BLIND, 1);
  const auto apart = [](double a, double b) { return std::abs(a - b) / std::max(a, b); };
  print_json({{"bench", "pipeline_speeds"}, {"job", path}, {"rounds", rounds}, {"epochs", epochs},
              {"slow_speed", slow}, {"aware_fast_first", rounded(aware_fast_first, 1)},
              {"aware_slow_first", rounded(aware_slow_first, 1)},
              {"blind_fast_first", rounded(blind_fast_first, 1)},
              {"blind_slow_first", rounded(blind_slow_first, 1)},
              {"aware_orders_apart", rounded(apart(aware_fast_first, aware_slow_first), 3)},
              {"blind_orders_apart", rounded(apart(blind_fast_first, blind_slow_first), 3)},
              {"aware_over_blind_fast_first", rounded(aware_fast_first / blind_fast_first, 3)},
              {"aware_over_blind_slow_first", rounded(aware_slow_first / blind_slow_first, 3)}});
  return 0;
}
