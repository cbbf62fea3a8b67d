#include "strom/runtime/sim/model/failure_timing.hpp"

#include <algorithm>
#include <cmath>

namespace strom::runtime::sim {

namespace {

/// The node daemon's reconnect back-off (runtime/node_daemon.cpp: first_reconnect_pause,
/// max_reconnect_pause).
constexpr double first_reconnect_pause_seconds = 0.1;
constexpr double max_reconnect_pause_seconds = 2.0;

} // namespace

double heartbeat_detection_time(double fault_seconds, double interval, double timeout,
                                double latency) {
  const double first_unanswered = std::max(0.0, std::ceil((fault_seconds - latency) / interval));
  return first_unanswered * interval + timeout;
}

double reconnect_time(double lost_seconds, double back_seconds, double latency) {
  double attempt = lost_seconds;
  double pause = first_reconnect_pause_seconds;
  while (attempt < back_seconds) {
    attempt += pause;
    pause = std::min(2 * pause, max_reconnect_pause_seconds);
  }
  return attempt + latency;
}

} // namespace strom::runtime::sim
