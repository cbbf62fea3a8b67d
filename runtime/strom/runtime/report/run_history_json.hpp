#pragma once
// A run's history (run_history.hpp) as the keys the metrics JSON adds for it:
// "epoch_history", "node_history" and "membership_events", each an array of flat objects, and
// "settings", an object of texts (report_data.hpp reads them back; the field names are a
// contract like the other keys).
// Internal to the runtime: it names nlohmann's type, which host programs need not have.

#include <nlohmann/json_fwd.hpp>

#include "strom/runtime/report/run_history.hpp"

namespace strom::runtime {

/// Adds the history keys to the metrics object `metrics` ("settings" only when there are any).
void add_history(nlohmann::ordered_json& metrics, const run_history& history);

} // namespace strom::runtime
