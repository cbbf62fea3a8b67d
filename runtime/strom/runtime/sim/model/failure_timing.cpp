#include "strom/runtime/sim/model/failure_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "strom/runtime/node/reconnect_pause.hpp"

namespace strom::runtime::sim {

double heartbeat_detection_time(double fault_seconds, double interval, double timeout,
                                double latency) {
  const double first_unanswered = std::max(0.0, std::ceil((fault_seconds - latency) / interval));
  return first_unanswered * interval + timeout;
}

double reconnect_time(double lost_seconds, double back_seconds, double latency) {
  double attempt = lost_seconds;
  std::chrono::duration<double> pause = first_reconnect_pause;
  while (attempt < back_seconds) {
    attempt += pause.count();
    pause = next_reconnect_pause(pause);
  }
  return attempt + latency;
}

} // namespace strom::runtime::sim
