#pragma once
// --metrics-listen, which `strom train` and `strom node` (scheduler and worker) take: what the
// process serves for operators (runtime/strom/runtime/observability/).

#include "arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/observability/observation.hpp"

namespace strom::cli {

/// `spec` with the options added after its own.
command_spec with_observation_options(command_spec spec);

/// Reads the options; errors name the option and value.
result<runtime::observation_options> read_observation_flags(const arguments& args);

} // namespace strom::cli
