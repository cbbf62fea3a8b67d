#pragma once
// A blocking receive that every waiting strom process shares: it ends when the caller has
// what it waited for, when SIGINT or SIGTERM asked to stop (stop_signals.hpp), or after a
// bounded silence, and looks for the stop request at least every signal_poll. Time is the
// actor clock's.

#include <caf/all.hpp>

#include "strom/runtime/stop_signals.hpp"

namespace strom::runtime {

/// Why a wait ended.
enum class wait_end {
  done,         ///< the caller's condition holds
  interrupted,  ///< SIGINT or SIGTERM
  silent,       ///< no message for the whole silence limit
};

/// Whether a wait gives way to a stop request: waits that must finish what an interruption
/// started (cancelling the job) do not.
enum class on_stop { end_wait, keep_waiting };

/// Receives on `self` with `handlers` until `done()` holds, a stop was requested (unless
/// `stop` is keep_waiting) or `silence` passed without any message.
template <class Done, class... Handlers>
wait_end receive_until(caf::scoped_actor& self, caf::timespan silence, on_stop stop, Done done,
                       Handlers&&... handlers) {
  auto end = wait_end::done;
  auto last_message = self->clock().now();
  bool polled = false;  // the previous receive ended by the poll timeout, not a message
  self->receive_while([&] {
    const auto now = self->clock().now();
    if (!polled)
      last_message = now;
    polled = false;
    if (done())
      return false;
    if (stop == on_stop::end_wait && stop_requested())
      end = wait_end::interrupted;
    else if (now - last_message >= silence)
      end = wait_end::silent;
    return end == wait_end::done;
  })(std::forward<Handlers>(handlers)..., caf::after(signal_poll) >> [&] { polled = true; });
  return end;
}

} // namespace strom::runtime
