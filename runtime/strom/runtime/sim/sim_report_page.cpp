#include "strom/runtime/sim/sim_report_page.hpp"

#include <fmt/format.h>

namespace strom::runtime::sim {

namespace {

std::vector<std::pair<double, double>> points_of(const std::vector<timed_value>& values) {
  std::vector<std::pair<double, double>> points;
  for (const auto& v : values)
    points.emplace_back(v.at, v.value);
  return points;
}

/// A chart over the job's time from one series; none when it has no point.
void add_timed(report_data& page, std::string id, std::string title, std::string y_label,
               std::string source, const std::vector<timed_value>& values) {
  if (values.empty())
    return;
  page.charts.push_back({std::move(id), std::move(title), "simulated seconds", std::move(y_label),
                         true, std::move(source), {{"job", points_of(values)}}});
}

} // namespace

report_data sim_report_data(const sim_result& r) {
  const auto& m = r.model;
  report_data page;
  page.job = fmt::format("{} ({} mode)", r.scenario, to_string(r.mode));
  page.summary = {
    {"passed", r.passed ? "yes" : "no"},
    {"nodes", std::to_string(r.nodes)},
    {"seed", std::to_string(r.seed)},
    {"outcome", m.completed ? "completed" : "failed: " + m.failure},
    {"samples/s", fmt::format("{:.1f}", m.samples_per_second)},
    {"scaling efficiency", fmt::format("{:.4f}", m.scaling_efficiency)},
    {"simulated seconds", fmt::format("{:.3f}", m.simulated_seconds)},
    {"trace_sha256", r.trace_sha256},
  };
  if (m.test_accuracy >= 0)
    page.summary.emplace_back("test accuracy", fmt::format("{:.4f}", m.test_accuracy));
  for (const auto& e : r.expectations)
    page.summary.emplace_back(
      fmt::format("{} ({})", e.name, e.field),
      fmt::format("{}: expected {}, got {}", e.held ? (*e.held ? "held" : "FAILED") : "not checked",
                  e.expected, e.got));
  for (const auto& f : m.faults)
    page.markers.push_back({f.at, f.node.empty() ? f.event : fmt::format("{} {}", f.event, f.node)});
  add_timed(page, "train_loss", "Training loss by epoch", "mean batch loss",
            "the job's epoch summaries (live mode)", m.train_loss);
  add_timed(page, "test_accuracy", "Test accuracy by epoch", "accuracy",
            "the job's epoch summaries (live mode)", m.epoch_accuracy);
  chart rates{"node_samples_per_second", "Samples/s per node", "simulated seconds",
              "samples/s", true,
              "each node's steps in 100 ms of virtual time, times the batch (live mode)", {}};
  for (const auto& n : m.nodes)
    if (!n.samples_per_second.empty())
      rates.series.push_back({n.name, points_of(n.samples_per_second)});
  if (!rates.series.empty())
    page.charts.push_back(std::move(rates));
  chart links{"link_bytes", "Bytes per link", "link (in the order listed)", "bytes", false, "",
              {{"bytes", {}}}};
  for (std::size_t i = 0; i < m.links.size(); ++i) {
    links.series.front().points.emplace_back(static_cast<double>(i),
                                             static_cast<double>(m.links[i].bytes));
    links.source += fmt::format("{}{}: {} -> {}", i == 0 ? "links " : ", ", i, m.links[i].from,
                                m.links[i].to);
  }
  if (!m.links.empty())
    page.charts.push_back(std::move(links));
  chart nodes{"node_bytes", "Bytes in and out per node", "node (in the order listed)", "bytes",
              false, "", {{"out", {}}, {"in", {}}}};
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    nodes.series[0].points.emplace_back(static_cast<double>(i),
                                        static_cast<double>(m.nodes[i].bytes_out));
    nodes.series[1].points.emplace_back(static_cast<double>(i),
                                        static_cast<double>(m.nodes[i].bytes_in));
    nodes.source += fmt::format("{}{}: {}", i == 0 ? "nodes " : ", ", i, m.nodes[i].name);
  }
  if (!m.nodes.empty() && m.nodes.size() <= 256)  // a mesh of thousands: the links chart
    page.charts.push_back(std::move(nodes));
  return page;
}

} // namespace strom::runtime::sim
