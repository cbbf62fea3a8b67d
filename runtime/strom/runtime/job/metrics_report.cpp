#include "strom/runtime/job/metrics_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "strom/compute/codecs/decode.hpp"
#include "strom/runtime/report/run_history_json.hpp"

namespace strom::runtime {

namespace {

// Ordered: the keys keep the order they are written in, which readers of the file expect.
using json = nlohmann::ordered_json;

/// A pipeline job's keys (mode "pipeline", issue #20).
void add_pipeline(json& out, const actors::pipeline_summary& p) {
  out["stages"] = p.stages;
  out["micro_batches"] = p.micro_batches;
  out["pipelines"] = p.pipelines;
  out["stage_layers"] = p.stage_layers;
  out["stage_nodes"] = p.stage_nodes;
  out["column_splits"] = p.column_splits;
  out["stage_seconds"] = p.stage_seconds;
  out["stage_seconds_predicted"] = p.stage_seconds_predicted;
  out["bubble_fraction"] = p.bubble_fraction;
  out["bubble_fraction_ideal"] = p.bubble_fraction_ideal;
  out["activation_bytes"] = p.activation_bytes;
  out["stage_restores"] = p.stage_restores;
  out["repartitions"] = p.repartitions;
}

/// Each tensor's sharing (issue #37): layer null for the whole model under one threshold.
json sharing_layers(const std::vector<actors::tensor_sharing>& tensors) {
  auto out = json::array();
  for (const auto& x : tensors) {
    json tensor;
    tensor["layer"] = x.layer < 0 ? json(nullptr) : json(x.layer);
    tensor["tensor"] = x.tensor;
    tensor["elements"] = x.elements;
    tensor["encoding"] = compute::to_string(static_cast<compute::encoding>(x.encoding));
    tensor["threshold"] = x.threshold;
    tensor["scale"] = x.scale;
    tensor["density"] = actors::density(x);
    tensor["clipped_fraction"] = actors::clipped_fraction(x);
    tensor["lag_steps"] = actors::lag_steps({x});
    out.push_back(std::move(tensor));
  }
  return out;
}

} // namespace

std::string to_json(const training_report& r, const run_history* history) {
  // JSON has no NaN or infinity: nlohmann writes those as null.
  const bool tested = r.test_accuracy >= 0;
  json out;
  out["job"] = r.job;
  out["test_accuracy"] = tested ? json(r.test_accuracy) : json(nullptr);
  out["test_loss"] = tested ? json(r.test_loss) : json(nullptr);
  out["final_loss"] = r.final_loss;
  out["epochs"] = r.epochs;
  out["workers"] = r.workers;
  out["nodes"] = r.nodes;
  out["wall_seconds"] = r.wall_seconds;
  out["train_seconds"] = r.train_seconds;
  out["train_samples"] = r.train_samples;
  out["train_samples_per_second"] = r.train_samples_per_second;
  out["iterations"] = r.iterations;
  out["checkpoint"] = r.checkpoint;
  out["bytes_sent"] = r.bytes_sent;
  out["dense_bytes_equivalent"] = r.dense_bytes_equivalent;
  out["updates_applied"] = r.updates_applied;
  out["duplicate_updates_dropped"] = r.duplicate_updates_dropped;
  out["duplicate_updates_applied"] = r.duplicate_updates_applied;
  out["frames_rejected"] = r.frames_rejected;
  out["mean_density"] = r.mean_density;
  out["final_threshold"] = r.final_threshold;
  out["nodes_lost"] = r.nodes_lost;
  out["nodes_restored"] = r.nodes_restored;
  out["nodes_joined"] = r.nodes_joined;
  out["failure_detection_seconds"] = r.failure_detection_seconds;
  out["restore_seconds"] = r.restore_seconds;
  out["scheduler_restarts"] = r.scheduler_restarts;
  out["job_restarts"] = r.job_restarts;
  out["samples_redone"] = r.samples_redone;
  out["topology"] = {{"kind", r.topology.kind},
                     {"fanout", r.topology.fanout},
                     {"version", r.topology.version},
                     {"max_links", r.topology.max_links}};
  out["mode"] = r.mode;
  out["device"] = r.device;
  out["averaging_frequency"] = r.averaging_frequency;
  out["averaging_rounds"] = r.averaging_rounds;
  out["averaging_bytes"] = r.averaging_bytes;
  out["kvstore"] = r.kvstore;
  out["servers"] = r.servers;
  out["replicas"] = r.replicas;
  out["push_bytes"] = r.push_bytes;
  out["push_dense_bytes"] = r.push_dense_bytes;
  out["pull_bytes"] = r.pull_bytes;
  out["server_updates"] = r.server_updates;
  out["server_failovers"] = r.server_failovers;
  if (!r.sharing_layers.empty())
    out["sharing_layers"] = sharing_layers(r.sharing_layers);
  if (r.mode == "pipeline")
    add_pipeline(out, r.pipeline);
  if (history)
    add_history(out, *history);
  return out.dump();
}

result<void> write_metrics(const std::string& path, const training_report& report,
                           const run_history* history) {
  std::ofstream out{path, std::ios::trunc};
  if (!out)
    return error{fmt::format("{}: cannot write metrics: {}", path, std::strerror(errno))};
  out << to_json(report, history) << '\n';
  if (!out.flush())
    return error{fmt::format("{}: cannot write metrics: {}", path, std::strerror(errno))};
  return success();
}

} // namespace strom::runtime
