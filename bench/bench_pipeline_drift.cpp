// Re-partitioning when a node's speed drifts (issue #20, LightDNN's dynamic partition): the
// example MLP as a 2-stage pipeline on 2 in-process nodes, equally fast when they join; from
// the first epoch on the node that holds the big first layer computes at DRIFT of its speed
// (--speed-drift, a testing aid). With the default margin the first two epochs show the drift,
// and the job splits its layers again before the third; with margin 0 it keeps the split it
// started with. The two are alternated ROUNDS times in one run (same machine load). Prints
// one JSON object per run and a summary: the median samples/s of the third epoch (the first on
// the new split) of each, and their ratio; each run's test loss, which must be the same for
// both (nothing is trained twice or lost by moving layers).
// Usage: bench_pipeline_drift [--rounds N] [--drift F] [JOB]

#include <fmt/format.h>

#include "json_line.hpp"
#include "median.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"

using strom::bench::json;
using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

/// Each epoch's samples/s, as the run reports it.
struct epoch_speeds : strom::runtime::training_observer {
  std::vector<double> samples_per_second;
  void on_epoch(const strom::actors::epoch_summary& summary) override {
    samples_per_second.push_back(summary.samples_per_second);
  }
};

struct drift_run {
  double third_epoch = 0.0;  ///< samples/s
  double test_loss = 0.0;
};

/// Three epochs with node 1 at `drift` throughout; re-partitioned beyond `margin`.
strom::result<drift_run> run_once(const std::string& path, double drift, float margin) {
  using namespace strom;
  auto job = runtime::load_job_file(path);
  if (!job)
    return job.err();
  runtime::local_training_options options;
  options.epochs = 3;
  options.mode = schema::TrainingMode::PIPELINE;
  options.repartition_margin = margin;
  epoch_speeds seen;
  options.observer = &seen;
  runtime::cluster_shape shape;
  shape.nodes = 2;
  // The equal nodes' split puts the big first layer on node 1: that one slows down.
  shape.node_speeds = {actors::node_speed{1.0, actors::speed_drift{drift, 0}},
                       actors::node_speed{}};
  auto report = runtime::train_on_cluster(*job, options, shape);
  if (!report)
    return report.err();
  if (seen.samples_per_second.size() != 3)
    return error{fmt::format("{} epochs reported, 3 expected", seen.samples_per_second.size())};
  std::string split;
  for (const auto& layers : report->pipeline.stage_layers)
    split += fmt::format("[{},{})", layers.front(), layers.back());
  json epoch_samples_per_second = json::array();
  for (const double samples : seen.samples_per_second)
    epoch_samples_per_second.push_back(rounded(samples, 1));
  print_json({{"bench", "pipeline_drift_run"}, {"repartition_margin", margin}, {"drift", drift},
              {"epoch_samples_per_second", epoch_samples_per_second},
              {"repartitions", report->pipeline.repartitions}, {"stage_layers", split},
              {"test_loss", rounded(report->test_loss, 9)}});
  return drift_run{seen.samples_per_second[2], report->test_loss};
}

} // namespace

int main(int argc, char** argv) {
  std::uint32_t rounds = 3;
  double drift = 0.3;
  std::string path = STROM_SOURCE_DIR "/examples/fashion_mlp.job";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (std::strcmp(argv[i], "--drift") == 0 && i + 1 < argc)
      drift = std::stod(argv[++i]);
    else
      path = argv[i];
  }
  std::vector<double> moved;
  std::vector<double> kept;
  bool same_model = true;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    auto with = run_once(path, drift, 0.25f);
    auto without = run_once(path, drift, 0.0f);
    if (!with || !without) {
      fmt::print(stderr, "{}\n", (!with ? with.err() : without.err()).message);
      return 1;
    }
    moved.push_back(with->third_epoch);
    kept.push_back(without->third_epoch);
    same_model = same_model && with->test_loss == without->test_loss;
  }
  print_json({{"bench", "pipeline_drift"}, {"job", path}, {"rounds", rounds}, {"drift", drift},
              {"repartitioned_third_epoch", rounded(median(moved), 1)},
              {"kept_third_epoch", rounded(median(kept), 1)},
              {"repartitioned_over_kept", rounded(median(moved) / median(kept), 3)},
              {"same_model", same_model}});
  return 0;
}
