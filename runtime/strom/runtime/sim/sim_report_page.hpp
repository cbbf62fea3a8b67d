#pragma once
// `strom sim --html-out FILE`: a run's report as the same self-contained page `strom submit
// --html-out` writes (report/html_page.hpp, uPlot vendored): the scenario's events marked on
// the time axes, training loss and test accuracy by epoch (live mode), each node's samples/s
// over time (live mode), and the bytes on each link and each node's bytes in and out (both
// modes).

#include "strom/runtime/report/report_data.hpp"
#include "strom/runtime/sim/run_scenario.hpp"

namespace strom::runtime::sim {

/// The page's data for run `r`.
report_data sim_report_data(const sim_result& r);

} // namespace strom::runtime::sim
