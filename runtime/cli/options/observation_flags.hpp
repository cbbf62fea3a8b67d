#pragma once
// --metrics-listen, which `strom train` and `strom node` (scheduler and worker) take: what the
// process serves for operators (runtime/strom/runtime/observability/); --timeline, which
// `strom train` and worker nodes take (they run trainers); and --stall-warning, which
// `strom train` and the scheduler take (their job masters watch for stalls).

#include "arguments.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/observability/observation.hpp"

namespace strom::cli {

/// `spec` with the options added after its own.
command_spec with_observation_options(command_spec spec);

/// Reads the options; errors name the option and value.
result<runtime::observation_options> read_observation_flags(const arguments& args);

/// `spec` with --timeline added (commands whose process runs trainers).
command_spec with_timeline_option(command_spec spec);

/// `spec` with --stall-warning added.
command_spec with_stall_option(command_spec spec);

/// Sets timeouts.stall_warning from --stall-warning, if given; errors name the value.
result<void> read_stall_warning(const arguments& args, actors::timing& timeouts);

} // namespace strom::cli
