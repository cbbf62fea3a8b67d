#include "strom/runtime/stop_signals.hpp"

namespace strom::runtime {

namespace {

/// Set by the handler, read by waits: the signal's number, 0 while none arrived.
volatile std::sig_atomic_t requested_by = 0;

extern "C" void request_stop(int number) { requested_by = number; }

} // namespace

stop_signals::stop_signals() {
  requested_by = 0;
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

stop_signals::~stop_signals() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

bool stop_requested() noexcept { return requested_by != 0; }

int stop_signal() noexcept { return requested_by; }

} // namespace strom::runtime
