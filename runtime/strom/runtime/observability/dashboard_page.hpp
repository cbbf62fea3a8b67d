#pragma once
// The scheduler's live dashboard (`strom node --scheduler --metrics-listen`, at /): one
// self-contained page like the run report (uPlot inline, no other load) that shows the cluster
// as it runs: nodes with role, incarnation, speed, heartbeat and lag; jobs with state,
// progress, accuracy, topology tree and stall; each job's loss over time and accuracy by
// epoch. It is served with the status of its request inline, so it shows at once, and its
// script then follows /status.json (live_cluster::json) every second. Once drawn, the body
// carries data-nodes-shown="N" and each job's loss chart a canvas (tests read both).

#include <string>

namespace strom::runtime {

/// The page, showing `status` (live_cluster::json) until its script fetched a newer one.
std::string render_dashboard(const std::string& status);

} // namespace strom::runtime
