#include "strom/actors/worker/compute_slowdown.hpp"

#include <chrono>

namespace strom::actors {

caf::timespan slowdown_wait(double speed_factor, caf::timespan computed) {
  if (speed_factor >= full_speed || speed_factor <= 0.0)
    return caf::timespan{0};
  const double factor = 1.0 / speed_factor - 1.0;
  return std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double, caf::timespan::period>(static_cast<double>(computed.count())
                                                         * factor));
}

} // namespace strom::actors
