#pragma once
// A run's history (run_history.hpp) as the keys the metrics JSON adds for it:
// "epoch_history", "node_history" and "membership_events", each an array of flat objects
// (report_data.hpp reads them back; the field names are a contract like the other keys).

#include <string>

#include "strom/runtime/report/run_history.hpp"

namespace strom::runtime {

/// `"epoch_history":[...],"node_history":[...],"membership_events":[...]`, to go inside the
/// metrics object.
std::string history_json_fields(const run_history& history);

} // namespace strom::runtime
