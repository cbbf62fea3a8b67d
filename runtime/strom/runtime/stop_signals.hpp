#pragma once
// SIGINT and SIGTERM as a request to stop, in one place for every strom process: daemons end
// cleanly, an attached client cancels its job or detaches, training says where its checkpoint
// is. The handler only sets a flag; every wait of a process that catches the signals looks at
// it at least every signal_poll (interruptible_wait.hpp).

#include <chrono>
#include <csignal>

namespace strom::runtime {

/// How often a waiting process looks for a stop request: quick enough that Ctrl-C feels
/// immediate, rare enough to cost nothing.
inline constexpr auto signal_poll = std::chrono::milliseconds(100);

/// Catches SIGINT and SIGTERM while it lives (clearing an earlier request), restoring the
/// previous handlers after.
class stop_signals {
public:
  stop_signals();
  ~stop_signals();
  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;

private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

/// True once SIGINT or SIGTERM arrived while a stop_signals lived.
bool stop_requested() noexcept;

/// The signal that asked to stop (SIGINT or SIGTERM), 0 when none did.
int stop_signal() noexcept;

} // namespace strom::runtime
