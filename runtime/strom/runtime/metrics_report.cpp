#include "strom/runtime/metrics_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "strom/compute/codecs/decode.hpp"
#include "strom/runtime/json_text.hpp"
#include "strom/runtime/report/run_history_json.hpp"

namespace strom::runtime {

namespace {

/// `values` as a JSON array of numbers.
std::string json_numbers(const std::vector<double>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + json_number(values[i]);
  return text + ']';
}

/// Lists of whole numbers as a JSON array of arrays.
std::string lists_text(const std::vector<std::vector<std::uint32_t>>& lists) {
  std::string text = "[";
  for (std::size_t i = 0; i < lists.size(); ++i)
    text += fmt::format("{}[{}]", i ? "," : "", fmt::join(lists[i], ","));
  return text + ']';
}

/// A pipeline job's keys (mode "pipeline", issue #20), without the braces.
std::string pipeline_fields(const actors::pipeline_summary& p) {
  const auto layers = lists_text(p.stage_layers);
  return fmt::format(
    "\"stages\":{},\"micro_batches\":{},\"pipelines\":{},\"stage_layers\":{},"
    "\"stage_nodes\":[{}],\"column_splits\":{},"
    "\"stage_seconds\":{},\"stage_seconds_predicted\":{},\"bubble_fraction\":{},"
    "\"bubble_fraction_ideal\":{},\"activation_bytes\":{},\"stage_restores\":{},"
    "\"repartitions\":{}",
    p.stages, p.micro_batches, p.pipelines, layers, fmt::join(p.stage_nodes, ","),
    lists_text(p.column_splits),
    json_numbers(p.stage_seconds),
    json_numbers(p.stage_seconds_predicted), json_number(p.bubble_fraction),
    json_number(p.bubble_fraction_ideal), p.activation_bytes, p.stage_restores,
    p.repartitions);
}

/// Each tensor's sharing (issue #37), as `"sharing_layers":[...]`: layer null for the whole
/// model under one threshold.
std::string sharing_layers_field(const std::vector<actors::tensor_sharing>& tensors) {
  std::string text = "\"sharing_layers\":[";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& x = tensors[i];
    text += fmt::format(
      "{}{{\"layer\":{},\"tensor\":{},\"elements\":{},\"encoding\":{},\"threshold\":{},"
      "\"scale\":{},\"density\":{},\"clipped_fraction\":{},\"lag_steps\":{}}}",
      i ? "," : "", x.layer < 0 ? std::string{"null"} : std::to_string(x.layer),
      json_string(x.tensor), x.elements,
      json_string(compute::to_string(static_cast<compute::encoding>(x.encoding))),
      json_number(x.threshold), json_number(x.scale), json_number(actors::density(x)),
      json_number(actors::clipped_fraction(x)), json_number(actors::lag_steps({x})));
  }
  return text + ']';
}

} // namespace

std::string to_json(const training_report& r, const run_history* history) {
  auto text = fmt::format(
    "{{\"job\":{},\"test_accuracy\":{},\"test_loss\":{},\"final_loss\":{},\"epochs\":{},"
    "\"workers\":{},\"nodes\":{},\"wall_seconds\":{},\"train_seconds\":{},\"train_samples\":{},"
    "\"train_samples_per_second\":{},\"iterations\":{},\"checkpoint\":{},\"bytes_sent\":{},"
    "\"dense_bytes_equivalent\":{},\"updates_applied\":{},\"duplicate_updates_dropped\":{},"
    "\"duplicate_updates_applied\":{},\"frames_rejected\":{},\"mean_density\":{},"
    "\"final_threshold\":{},\"nodes_lost\":{},\"nodes_restored\":{},\"nodes_joined\":{},"
    "\"failure_detection_seconds\":{},\"restore_seconds\":{},\"scheduler_restarts\":{},"
    "\"samples_redone\":{},\"topology\":{{\"kind\":{},\"fanout\":{},\"version\":{},"
    "\"max_links\":{}}},\"mode\":{},\"averaging_frequency\":{},\"averaging_rounds\":{},"
    "\"averaging_bytes\":{},\"kvstore\":{},\"servers\":{},\"replicas\":{},\"push_bytes\":{},"
    "\"push_dense_bytes\":{},\"pull_bytes\":{},\"server_updates\":{},\"server_failovers\":{}}}",
    json_string(r.job), r.test_accuracy < 0 ? "null" : json_number(r.test_accuracy),
    r.test_accuracy < 0 ? "null" : json_number(r.test_loss),
    json_number(r.final_loss), r.epochs, r.workers, r.nodes, json_number(r.wall_seconds),
    json_number(r.train_seconds), r.train_samples, json_number(r.train_samples_per_second),
    r.iterations, json_string(r.checkpoint), r.bytes_sent, r.dense_bytes_equivalent,
    r.updates_applied, r.duplicate_updates_dropped, r.duplicate_updates_applied, r.frames_rejected,
    json_number(r.mean_density), json_number(r.final_threshold), r.nodes_lost, r.nodes_restored,
    r.nodes_joined, json_number(r.failure_detection_seconds), json_number(r.restore_seconds),
    r.scheduler_restarts, r.samples_redone, json_string(r.topology.kind), r.topology.fanout,
    r.topology.version, r.topology.max_links, json_string(r.mode), r.averaging_frequency,
    r.averaging_rounds, r.averaging_bytes, json_string(r.kvstore), r.servers, r.replicas,
    r.push_bytes, r.push_dense_bytes, r.pull_bytes, r.server_updates, r.server_failovers);
  if (!r.sharing_layers.empty()) {
    text.pop_back();  // the closing brace
    text += ',' + sharing_layers_field(r.sharing_layers) + '}';
  }
  if (r.mode == "pipeline") {
    text.pop_back();  // the closing brace
    text += ',' + pipeline_fields(r.pipeline) + '}';
  }
  if (history) {
    text.pop_back();  // the closing brace: the history's keys go inside the object
    text += ',' + history_json_fields(*history) + '}';
  }
  return text;
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
