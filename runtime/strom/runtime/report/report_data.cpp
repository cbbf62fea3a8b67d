#include "strom/runtime/report/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

namespace strom::runtime {

namespace {

using json = nlohmann::ordered_json;  // keeps "settings" in the order the run wrote it

/// Chrome trace times are microseconds.
constexpr double micros_per_second = 1e6;
/// The trace's batch spans are counted in this many windows over the run: enough for a
/// curve, few enough that a window of a short run still holds several steps.
constexpr int trace_windows = 40;
/// Bytes in a mebibyte, for the byte charts' axis.
constexpr double bytes_per_mib = 1024.0 * 1024.0;

/// Reads a whole JSON document; the error names the file and what is wrong where.
result<json> parse_document(const std::string& text, const std::string& name) {
  // Without exceptions a malformed text gives a "discarded" value; the parser is iterative,
  // so deep nesting cannot exhaust the stack.
  auto parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded())
    return error{fmt::format("{}: not a JSON document", name)};
  if (!parsed.is_object())
    return error{fmt::format("{}: expected a JSON object at the top", name)};
  return parsed;
}

/// `object[key]` as a number; without a `fallback` (which null and absence give) it must be one.
result<double> number_at(const json& object, const std::string& key, const std::string& where,
                         std::optional<double> fallback = std::nullopt) {
  auto found = object.find(key);
  if (fallback && (found == object.end() || found->is_null()))
    return *fallback;
  if (found == object.end())
    return error{fmt::format("{}.{}: expected a number, found nothing", where, key)};
  if (!found->is_number())
    return error{fmt::format("{}.{}: expected a number, found {}", where, key, found->dump())};
  return found->get<double>();
}

/// `object[key]` as an array of objects; absence gives an empty one.
result<std::vector<json>> objects_at(const json& object, const std::string& key,
                                     const std::string& where) {
  auto found = object.find(key);
  if (found == object.end())
    return std::vector<json>{};
  if (!found->is_array())
    return error{fmt::format("{}.{}: expected an array", where, key)};
  std::vector<json> items;
  for (std::size_t i = 0; i < found->size(); ++i) {
    if (!(*found)[i].is_object())
      return error{fmt::format("{}.{}[{}]: expected an object", where, key, i)};
    items.push_back((*found)[i]);
  }
  return items;
}

/// Reads `keys` of `item` (at `where`) as numbers, in order.
result<std::vector<double>> numbers_of(const json& item, const std::string& where,
                                       std::initializer_list<const char*> keys) {
  std::vector<double> values;
  for (const char* key : keys) {
    auto value = number_at(item, key, where);
    if (!value)
      return value.err();
    values.push_back(*value);
  }
  return values;
}

void sort_points(chart& c) {
  for (auto& s : c.series)
    std::sort(s.points.begin(), s.points.end());
}

// -- the metrics' own figures -------------------------------------------------------------

result<void> read_summary(const json& metrics, const std::string& name, report_data& out) {
  if (auto job = metrics.find("job"); job != metrics.end() && job->is_string())
    out.job = job->get<std::string>();
  // (key, label, how it is shown); absent keys are left out.
  const struct {
    const char* key;
    const char* label;
    const char* format;
    double scale;
  } figures[] = {
    {"test_accuracy", "test accuracy", "{:.2f}%", 100.0},
    {"test_loss", "test loss", "{:.4f}", 1.0},
    {"final_loss", "final training loss", "{:.4f}", 1.0},
    {"epochs", "epochs", "{:.0f}", 1.0},
    {"nodes", "nodes", "{:.0f}", 1.0},
    {"workers", "workers", "{:.0f}", 1.0},
    {"wall_seconds", "wall time (s)", "{:.1f}", 1.0},
    {"train_samples_per_second", "training samples/s", "{:.0f}", 1.0},
    {"bytes_sent", "update bytes sent (MiB)", "{:.2f}", 1.0 / bytes_per_mib},
    {"mean_density", "mean density", "{:.5f}", 1.0},
    {"final_threshold", "final threshold", "{:.5f}", 1.0},
    {"nodes_lost", "nodes lost", "{:.0f}", 1.0},
    {"nodes_restored", "nodes restored", "{:.0f}", 1.0},
  };
  for (const auto& f : figures) {
    auto found = metrics.find(f.key);
    if (found == metrics.end() || found->is_null())
      continue;
    auto value = number_at(metrics, f.key, name);
    if (!value)
      return value.err();
    out.summary.emplace_back(f.label, fmt::format(fmt::runtime(f.format), *value * f.scale));
  }
  // What the run was told: the strings the metrics name it by, then the command's settings.
  for (const char* key : {"mode", "topology", "device", "kvstore"})
    if (auto found = metrics.find(key); found != metrics.end() && found->is_string()
                                        && !found->get<std::string>().empty())
      out.settings.emplace_back(key, found->get<std::string>());
  if (auto settings = metrics.find("settings"); settings != metrics.end()) {
    if (!settings->is_object())
      return error{fmt::format("{}.settings: expected an object", name)};
    for (const auto& [key, value] : settings->items()) {
      if (!value.is_string())
        return error{fmt::format("{}.settings.{}: expected a string, found {}", name, key,
                                 value.dump())};
      out.settings.emplace_back(key, value.get<std::string>());
    }
  }
  return success();
}

result<void> read_epochs(const json& metrics, const std::string& name, report_data& out) {
  auto epochs = objects_at(metrics, "epoch_history", name);
  if (!epochs)
    return epochs.err();
  chart loss{"loss", "Loss per epoch", "epoch", "loss", false,
             "epoch_history of the metrics", {{"training loss", {}}, {"test loss", {}}}};
  chart accuracy{"accuracy", "Test accuracy per epoch", "epoch", "accuracy (%)", false,
                 "epoch_history of the metrics", {{"test accuracy", {}}}};
  chart speed{"epoch_speed", "Samples/s per epoch (all nodes)", "epoch", "samples/s", false,
              "epoch_history of the metrics", {{"all nodes", {}}}};
  for (std::size_t i = 0; i < epochs->size(); ++i) {
    const auto& e = (*epochs)[i];
    const auto where = fmt::format("{}.epoch_history[{}]", name, i);
    auto v = numbers_of(e, where, {"epoch", "train_loss", "samples_per_second"});
    if (!v)
      return v.err();
    const double epoch = (*v)[0];
    loss.series[0].points.emplace_back(epoch, (*v)[1]);
    speed.series[0].points.emplace_back(epoch, (*v)[2]);
    if (e.contains("test_accuracy") && !e["test_accuracy"].is_null()) {
      auto tested = numbers_of(e, where, {"test_loss", "test_accuracy"});
      if (!tested)
        return tested.err();
      loss.series[1].points.emplace_back(epoch, (*tested)[0]);
      accuracy.series[0].points.emplace_back(epoch, 100.0 * (*tested)[1]);
    }
  }
  for (auto* c : {&loss, &accuracy, &speed})
    out.charts.push_back(std::move(*c));
  return success();
}

/// The per-node series from node_history; false when there is none.
result<bool> read_nodes(const json& metrics, const std::string& name, report_data& out) {
  auto records = objects_at(metrics, "node_history", name);
  if (!records)
    return records.err();
  if (records->empty())
    return false;
  const std::string source = "node_history of the metrics (node agents' reports)";
  chart speed{"node_speed", "Samples/s per node", "seconds since start", "samples/s", true,
              source, {}};
  chart bytes{"node_bytes", "Update bytes sent per node", "seconds since start",
              "MiB (cumulative)", true, source, {}};
  chart threshold{"threshold", "Threshold over time", "seconds since start", "threshold", true,
                  source, {}};
  chart density{"density", "Density over time (values sent / elements)", "seconds since start",
                "density", true, source, {}};
  // By node: (time, samples, updates, density_sum, bytes_sent) of its previous record; after
  // the loop, of its last.
  std::map<std::string, std::vector<double>> previous;
  std::map<std::string, std::size_t> series_of;
  for (std::size_t i = 0; i < records->size(); ++i) {
    const auto& r = (*records)[i];
    const auto where = fmt::format("{}.node_history[{}]", name, i);
    auto node = r.find("node");
    if (node == r.end() || !node->is_string())
      return error{fmt::format("{}.node: expected a string", where)};
    auto v = numbers_of(r, where,
                        {"at_seconds", "samples", "bytes_sent", "updates", "density_sum",
                         "threshold"});
    if (!v)
      return v.err();
    const auto label = node->get<std::string>();
    if (!series_of.count(label)) {
      series_of[label] = speed.series.size();
      for (auto* c : {&speed, &bytes, &threshold, &density})
        c->series.push_back({label, {}});
    }
    const auto s = series_of[label];
    const double at = (*v)[0];
    bytes.series[s].points.emplace_back(at, (*v)[2] / bytes_per_mib);
    if ((*v)[3] > 0)
      threshold.series[s].points.emplace_back(at, (*v)[5]);
    if (auto before = previous.find(label); before != previous.end()) {
      const auto& p = before->second;
      if (at > p[0])
        speed.series[s].points.emplace_back(at, ((*v)[1] - p[1]) / (at - p[0]));
      if ((*v)[3] > p[2])
        density.series[s].points.emplace_back(at, ((*v)[4] - p[3]) / ((*v)[3] - p[2]));
    }
    previous[label] = {at, (*v)[1], (*v)[3], (*v)[4], (*v)[2]};
  }
  // A node's last record may come after its last step (the job ended): no drop to 0 then.
  for (auto& line : speed.series)
    if (!line.points.empty() && line.points.back().second == 0.0)
      line.points.pop_back();
  bar_group samples{"node_samples", "Samples trained per node", "samples", {}};
  bar_group sent{"node_sent", "Update bytes sent per node", "MiB", {}};
  for (const auto& line : speed.series) {
    const auto& last = previous.at(line.label);
    samples.bars.emplace_back(line.label, last[1]);
    sent.bars.emplace_back(line.label, last[4] / bytes_per_mib);
  }
  out.bars.push_back(std::move(samples));
  out.bars.push_back(std::move(sent));
  for (auto* c : {&speed, &bytes, &threshold, &density})
    out.charts.push_back(std::move(*c));
  return true;
}

/// The per-tensor threshold and density of the first node in node_history (issue #37); no
/// charts when its records carry no tensors (an older file, or nothing shared).
result<void> read_tensors(const json& metrics, const std::string& name, report_data& out) {
  auto records = objects_at(metrics, "node_history", name);
  if (!records)
    return records.err();
  chart threshold{"tensor_threshold", "", "seconds since start", "threshold", true, "", {}};
  chart density{"tensor_density", "", "seconds since start", "values sent / elements", true,
                "", {}};
  std::string first_node;
  std::map<std::string, std::size_t> series_of;
  std::map<std::string, std::pair<double, double>> previous;  // values_sent, encodes
  for (std::size_t i = 0; i < records->size(); ++i) {
    const auto& r = (*records)[i];
    const auto tensors = r.find("tensors");
    const auto node = r.find("node");
    if (tensors == r.end() || !tensors->is_array() || node == r.end() || !node->is_string())
      continue;
    if (first_node.empty())
      first_node = node->get<std::string>();
    if (node->get<std::string>() != first_node)
      continue;
    const auto where = fmt::format("{}.node_history[{}].tensors", name, i);
    auto at = number_at(r, "at_seconds", where);
    if (!at)
      return at.err();
    for (std::size_t k = 0; k < tensors->size(); ++k) {
      const auto& t = (*tensors)[k];
      const auto label = t.find("tensor");
      if (!t.is_object() || label == t.end() || !label->is_string())
        return error{fmt::format("{}[{}].tensor: expected a string", where, k)};
      auto v = numbers_of(t, fmt::format("{}[{}]", where, k),
                          {"threshold", "values_sent", "encodes", "elements"});
      if (!v)
        return v.err();
      const auto key = label->get<std::string>();
      if (!series_of.count(key)) {
        series_of[key] = threshold.series.size();
        threshold.series.push_back({key, {}});
        density.series.push_back({key, {}});
      }
      const auto s = series_of[key];
      if ((*v)[0] > 0)
        threshold.series[s].points.emplace_back(*at, (*v)[0]);
      if (auto before = previous.find(key); before != previous.end()) {
        const double steps = ((*v)[2] - before->second.second) * (*v)[3];
        if (steps > 0)
          density.series[s].points.emplace_back(*at, ((*v)[1] - before->second.first) / steps);
      }
      previous[key] = {(*v)[1], (*v)[2]};
    }
  }
  if (series_of.empty())
    return success();
  const std::string source = "node_history of the metrics: " + first_node + "'s workers";
  threshold.title = "Threshold per tensor over time (" + first_node + ")";
  density.title = "Density per tensor over time (" + first_node + ")";
  threshold.source = density.source = source;
  out.charts.push_back(std::move(threshold));
  out.charts.push_back(std::move(density));
  return success();
}

result<void> read_membership(const json& metrics, const std::string& name, report_data& out) {
  auto events = objects_at(metrics, "membership_events", name);
  if (!events)
    return events.err();
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto& e = (*events)[i];
    const auto where = fmt::format("{}.membership_events[{}]", name, i);
    auto at = number_at(e, "at_seconds", where);
    if (!at)
      return at.err();
    auto kind = e.find("kind");
    if (kind == e.end() || !kind->is_string())
      return error{fmt::format("{}.kind: expected a string", where)};
    out.markers.push_back({*at, "node " + kind->get<std::string>()});
  }
  return success();
}

// -- the trace: per-node series when the metrics hold none -----------------------------------

/// What the charts take from a trace's events.
struct trace_figures {
  std::map<std::uint64_t, std::vector<double>> batch_starts;  ///< by node: seconds
  std::map<std::uint64_t, std::vector<std::pair<double, double>>> received;  ///< by node: MiB
  double end = 0.0;
  std::size_t batches = 0;
};

/// Adds one trace event (at `where`) to `figures`.
result<void> note_trace_event(const json& e, const std::string& where, trace_figures& figures) {
  if (!e.is_object())
    return error{fmt::format("{}: expected an object", where)};
  const auto phase = e.value("ph", std::string{});
  if (phase != "X" && phase != "C")
    return success();
  const auto name_of = e.value("name", std::string{});
  auto v = numbers_of(e, where, {"pid", "ts"});
  if (!v)
    return v.err();
  const auto node = static_cast<std::uint64_t>((*v)[0]);
  const double at = (*v)[1] / micros_per_second;
  figures.end = std::max(figures.end, at);
  if (phase == "X" && name_of == "batch") {
    figures.batch_starts[node].push_back(at);
    ++figures.batches;
  } else if (phase == "C" && name_of == "relay_traffic" && e.contains("args")) {
    auto bytes = number_at(e["args"], "bytes_received", where + ".args");
    if (!bytes)
      return bytes.err();
    figures.received[node].emplace_back(at, *bytes / bytes_per_mib);
  }
  return success();
}

/// Reads a trace's events one at a time: each is noted and dropped as soon as it is parsed,
/// so a long run's trace never stands in memory as a tree (a 90 MB trace: 1.8 GB as a tree,
/// 134 MB of peak memory read this way, text included).
result<trace_figures> collect_trace(const std::string& text, const std::string& name) {
  trace_figures figures;
  std::optional<error> failed;
  std::string top_key;
  std::size_t index = 0;
  // Depth 0 is the trace object, 1 its values (the traceEvents array), 2 the events.
  auto on_parsed = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1)
      top_key = parsed.get<std::string>();
    if (depth != 2 || top_key != "traceEvents"
        || (event != json::parse_event_t::object_end && event != json::parse_event_t::value))
      return true;
    if (!failed) {
      auto noted =
        note_trace_event(parsed, fmt::format("{}.traceEvents[{}]", name, index), figures);
      if (!noted)
        failed = noted.err();
    }
    ++index;
    return false;  // noted: not kept
  };
  auto trace = json::parse(text, on_parsed, false);
  if (trace.is_discarded())
    return error{fmt::format("{}: not a JSON document", name)};
  if (failed)
    return *failed;
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return error{fmt::format("{}: no traceEvents array: not a Chrome trace", name)};
  return figures;
}

/// Reads the trace (refusing a bad one); adds its per-node charts when `add_charts`.
result<void> read_trace(const std::string& text, const std::string& name,
                        double train_samples, bool add_charts, report_data& out) {
  auto collected = collect_trace(text, name);
  if (!collected)
    return collected.err();
  const auto& [batch_starts, received, end, batches] = *collected;
  if (!add_charts)
    return success();
  const std::string source = "the trace (--timeline): ";
  if (batches > 0 && end > 0) {
    // The trace has no batch sizes: the metrics' samples spread evenly over its batches.
    const double samples_per_batch = train_samples / static_cast<double>(batches);
    const double window = end / trace_windows;
    chart speed{"node_speed", "Samples/s per node", "seconds since start", "samples/s", true,
                source + "batch spans per window x train_samples / batches", {}};
    for (const auto& [node, starts] : batch_starts) {
      std::vector<double> counts(trace_windows, 0.0);
      for (double at : starts)
        counts[std::min(trace_windows - 1, static_cast<int>(at / window))] += 1.0;
      chart_series line{fmt::format("node {}", node), {}};
      for (int w = 0; w < trace_windows; ++w)
        line.points.emplace_back((w + 0.5) * window, counts[w] * samples_per_batch / window);
      speed.series.push_back(std::move(line));
    }
    out.charts.push_back(std::move(speed));
  }
  if (!received.empty()) {
    chart bytes{"node_bytes", "Update bytes received per node", "seconds since start",
                "MiB (cumulative)", true, source + "relay_traffic counters", {}};
    for (const auto& [node, points] : received)
      bytes.series.push_back({fmt::format("node {}", node), points});
    out.charts.push_back(std::move(bytes));
  }
  return success();
}

} // namespace

result<report_data> read_report_data(const report_sources& sources) {
  auto metrics = parse_document(sources.metrics_text, sources.metrics_name);
  if (!metrics)
    return metrics.err();
  report_data out;
  if (auto ok = read_summary(*metrics, sources.metrics_name, out); !ok)
    return ok.err();
  if (auto ok = read_epochs(*metrics, sources.metrics_name, out); !ok)
    return ok.err();
  auto nodes = read_nodes(*metrics, sources.metrics_name, out);
  if (!nodes)
    return nodes.err();
  if (auto ok = read_tensors(*metrics, sources.metrics_name, out); !ok)
    return ok.err();
  if (auto ok = read_membership(*metrics, sources.metrics_name, out); !ok)
    return ok.err();
  if (sources.trace_text) {
    auto samples = number_at(*metrics, "train_samples", sources.metrics_name, 0.0);
    if (!samples)
      return samples.err();
    // The nodes' own figures are exact; the trace's stand in only where they are missing.
    if (auto ok = read_trace(*sources.trace_text, sources.trace_name, *samples, !*nodes, out);
        !ok)
      return ok.err();
  }
  out.charts.erase(std::remove_if(out.charts.begin(), out.charts.end(),
                                  [](const chart& c) {
                                    return std::all_of(c.series.begin(), c.series.end(),
                                                       [](const chart_series& s) {
                                                         return s.points.empty();
                                                       });
                                  }),
                   out.charts.end());
  for (auto& c : out.charts)
    sort_points(c);
  return out;
}

result<std::string> read_report_input(const std::string& path) {
  std::ifstream in{path, std::ios::binary | std::ios::ate};
  if (!in)
    return error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size > max_report_input_bytes)
    return error{fmt::format("{}: {} bytes, more than the {} a report reads", path, size,
                             max_report_input_bytes)};
  std::string text(size, '\0');
  in.seekg(0);
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    return error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  return text;
}

} // namespace strom::runtime
