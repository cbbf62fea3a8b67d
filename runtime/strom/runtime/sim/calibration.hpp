#pragma once
// Calibration files: this machine's costs for one job (schema/scenario.capnp, Calibration),
// written by `strom sim calibrate JOB -o FILE` in Cap'n Proto's text format and read by
// scenarios (costs.calibration). Read like job files: errors name the file, line and column,
// or the field and its value.

#include <string>
#include <string_view>

#include "strom/compute/result.hpp"
#include "strom/runtime/sim/step_costs.hpp"
#include "strom/schema/scenario.capnp.h"

namespace strom::runtime::sim {

/// The calibration in `text`; `source` names it in errors.
result<calibration_table> parse_calibration(std::string_view text, const std::string& source);

/// Reads and checks the calibration file at `path`.
result<calibration_table> load_calibration_file(const std::string& path);

/// `calibration` in Cap'n Proto's text format, as load_calibration_file reads it.
std::string to_text(schema::Calibration::Reader calibration);

} // namespace strom::runtime::sim
