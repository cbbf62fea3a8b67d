#pragma once
// From files to a report page, the way `strom report` and `--html-out` both make one: the
// metrics JSON (as text, or a file) and an optional Chrome trace file in, the page out.

#include <optional>
#include <string>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// Writes the page of `metrics_text` (named `metrics_name` in errors) and of the trace at
/// `timeline_path` (when given) to `html_path`; the error names the file and what was wrong.
result<void> write_report_page(const std::string& html_path, const std::string& metrics_text,
                               const std::string& metrics_name,
                               const std::optional<std::string>& timeline_path);

} // namespace strom::runtime
