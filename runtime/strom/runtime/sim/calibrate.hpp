#pragma once
// `strom sim calibrate JOB`: measures what a job costs on this machine with the real compute
// library (compute/): one worker's step on the job's model and data, the density the job's
// threshold settles at when its updates are shared, and at several densities the time to
// encode an update into a frame, the frame's size and the time to read and apply it, and what
// sealing and opening a frame's TLS records cost (calibrate_tls.hpp). The
// result is a Calibration (schema/scenario.capnp) that scenarios name (costs.calibration).

#include <capnp/message.h>

#include <memory>
#include <string>

#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/schema/scenario.capnp.h"

namespace strom::runtime::sim {

/// How long calibration may measure each of its parts.
struct calibrate_options {
  double step_seconds_budget = 1.5;     ///< plain training steps
  double sharing_seconds_budget = 1.5;  ///< sharing steps that find the job's density
  double density_seconds_budget = 0.3;  ///< each density's encode and decode
  double tls_seconds_budget = 0.2;      ///< sealing and opening TLS records
};

/// The measured costs; the message owns them.
using calibration_message = std::unique_ptr<capnp::MallocMessageBuilder>;

/// Measures `job` (its data loaded from the paths in it); errors name the job's file.
result<calibration_message> calibrate(const job_spec& job, const calibrate_options& options = {});

} // namespace strom::runtime::sim
