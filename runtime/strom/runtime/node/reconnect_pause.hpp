#pragma once
// How long a node waits between tries to reach a lost scheduler again: 100 ms at first,
// doubled after each try up to 2 s (a restarted scheduler listens within a second or two;
// tries every 2 s cost nothing). The node daemon (node_daemon.cpp) paces itself by it, and so
// do the live simulation's stand-in for it (sim/live/live_stand_ins.cpp) and the model of it
// (sim/model/failure_timing.cpp).

#include <algorithm>
#include <chrono>

namespace strom::runtime {

inline constexpr std::chrono::milliseconds first_reconnect_pause{100};
inline constexpr std::chrono::milliseconds max_reconnect_pause{2000};

/// The pause after a try that followed `pause`.
template <class Duration>
Duration next_reconnect_pause(Duration pause) {
  return std::min<Duration>(pause * 2, max_reconnect_pause);
}

} // namespace strom::runtime
