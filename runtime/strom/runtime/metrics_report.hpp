#pragma once
// The machine-readable summary of a run (`--metrics-out FILE`): one JSON object. Later
// transports add their fields to the same object.

#include <string>

#include "strom/actors/training_report.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

using actors::training_report;

/// The report as one JSON object.
std::string to_json(const training_report& report);

/// Writes to_json(report) and a newline to `path`.
result<void> write_metrics(const std::string& path, const training_report& report);

} // namespace strom::runtime
