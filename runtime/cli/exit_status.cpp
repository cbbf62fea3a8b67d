// The exit status of a failed command: a stop signal's shows through, as the shell expects.

#include "commands.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

int failure_status() {
  return runtime::stop_requested() ? exit_signal_base + runtime::stop_signal() : exit_failure;
}

} // namespace strom::cli
