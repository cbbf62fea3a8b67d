#pragma once
// A run's report (report_data.hpp) as one self-contained HTML page: the charting library
// (chart_library.hpp), its style, the data as JSON and the script that draws the charts are
// all inline, so the page works offline and requests nothing (its Content-Security-Policy
// forbids every load, so a stray request would fail loudly). Once its script ran, the body
// carries data-charts-drawn="N" (tests read it from the rendered page).

#include <string>

#include "strom/compute/result.hpp"
#include "strom/runtime/report/report_data.hpp"

namespace strom::runtime {

/// The page.
std::string render_html_report(const report_data& data);

/// HTML text with its special characters escaped.
std::string html_text(const std::string& text);

/// JSON text as a <script> element may hold it: '<' written as \u003c (the same character
/// inside a JSON string; JSON has no '<' elsewhere), so no text of the data can end the
/// element.
std::string script_safe_json(const std::string& json);

/// Writes render_html_report(data) to `path` (replacing it whole); the error names the file.
result<void> write_html_report(const std::string& path, const report_data& data);

} // namespace strom::runtime
