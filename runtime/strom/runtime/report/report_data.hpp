#pragma once
// What an HTML report shows, read from a run's metrics JSON (metrics_report.hpp, with the
// history keys of run_history_json.hpp) and, optionally, its Chrome trace (--timeline): a few
// summary figures and the charts, each a set of named (x, y) series sorted by x, and the
// membership changes to mark on the charts' time axes. Each chart says what it was drawn
// from. Where the metrics hold no node history (a client of a remote scheduler records only
// epochs), the trace's batch spans and relay counters stand in for the per-node series; a
// given trace is checked either way.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// One named line of a chart.
struct chart_series {
  std::string label;
  std::vector<std::pair<double, double>> points;  ///< (x, y), sorted by x
};

/// One chart.
struct chart {
  std::string id;  ///< stable, for the page's element ids and for tests
  std::string title;
  std::string x_label;
  std::string y_label;
  bool time_axis = false;  ///< x is seconds since the run started (markers apply)
  std::string source;      ///< what the series were drawn from, shown under the chart
  std::vector<chart_series> series;
};

/// A moment to mark on every time axis: a node lost, restored or joined.
struct time_marker {
  double at_seconds = 0.0;
  std::string label;
};

/// One figure of each node, drawn as bars side by side.
struct bar_group {
  std::string id;     ///< stable, for the page's element ids and for tests
  std::string title;
  std::string unit;   ///< shown after each value
  std::vector<std::pair<std::string, double>> bars;  ///< (node, value), in the nodes' order
};

/// Everything a report page holds.
struct report_data {
  std::string job;
  std::vector<std::pair<std::string, std::string>> summary;  ///< (name, value as text)
  std::vector<std::pair<std::string, std::string>> settings;  ///< command line, hyperparameters
  std::vector<bar_group> bars;  ///< per-node totals; none without a node history
  std::vector<chart> charts;  ///< only charts with at least one point
  std::vector<time_marker> markers;
};

/// The text of a metrics file and, optionally, of a trace, with the names errors give them.
struct report_sources {
  std::string metrics_text;
  std::string metrics_name;
  std::optional<std::string> trace_text;
  std::string trace_name;
};

/// The report's data; the error names the file, the field and the value that was wrong.
result<report_data> read_report_data(const report_sources& sources);

/// Largest metrics or trace file a report reads: a trace of hours of a small model's steps
/// (timeline.hpp keeps 2M events a track, about 100 bytes each in JSON) stays below it.
inline constexpr std::size_t max_report_input_bytes = std::size_t{1} << 30;

/// Reads a report input file whole, refusing one over max_report_input_bytes; the error names
/// the file.
result<std::string> read_report_input(const std::string& path);

} // namespace strom::runtime
