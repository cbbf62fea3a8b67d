#pragma once
// The machine-readable summary of a run (`--metrics-out FILE`): one JSON object. Later
// transports add their fields to the same object.

#include <string>

#include "strom/actors/job/training_report.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/report/run_history.hpp"

namespace strom::runtime {

using actors::training_report;

/// The report as one JSON object; with `history`, its keys (run_history_json.hpp) too.
std::string to_json(const training_report& report, const run_history* history = nullptr);

/// Writes to_json(report, history) and a newline to `path`.
result<void> write_metrics(const std::string& path, const training_report& report,
                           const run_history* history = nullptr);

} // namespace strom::runtime
