#pragma once
// How every command that trains ends (train, submit, attach): the same metrics file and the
// same summary, wherever the job ran.

#include <optional>
#include <string>
#include <string_view>

#include "strom/compute/result.hpp"
#include "strom/runtime/metrics_report.hpp"

namespace strom::cli {

/// Writes `report` to `metrics_out` (when set) and prints its summary on stdout; on failure
/// prints "COMMAND: message" on stderr. Returns the command's exit status.
int finish_training(std::string_view command, const result<runtime::training_report>& report,
                    const std::optional<std::string>& metrics_out);

} // namespace strom::cli
