#pragma once
// How every command that trains ends (train, submit, attach): the same metrics file and the
// same summary, wherever the job ran.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/job/metrics_report.hpp"

namespace strom::cli {

/// What a training command writes at its end besides its summary.
struct training_outputs {
  std::optional<std::string> metrics_out;  ///< --metrics-out FILE
  std::optional<std::string> html_out;     ///< --html-out FILE
  const runtime::run_history* history = nullptr;  ///< what the run recorded over time
};

/// The --html-out option of the commands that train.
inline const char* const html_out_help =
  "write the run's report as one self-contained HTML page (charts, no network) to FILE";

/// The settings a run's report lists: its command line (`command` and its `argc` arguments) and
/// the job's hyperparameters as `overrides` leave them.
std::vector<runtime::run_setting> run_settings(std::string_view command, int argc, char** argv,
                                               const runtime::job_spec& job,
                                               const runtime::local_training_options& overrides);

/// Writes `report` to the outputs asked for and prints its summary on stdout; on failure
/// prints "COMMAND: message" on stderr. Returns the command's exit status.
int finish_training(std::string_view command, const result<runtime::training_report>& report,
                    const training_outputs& outputs);

} // namespace strom::cli
