#pragma once
// Seconds as scenarios give them, and caf::timespan as the actors' (virtual) clocks keep them.

#include <chrono>

#include <caf/timespan.hpp>

namespace strom::runtime::sim {

inline caf::timespan to_timespan(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

inline double seconds_of(caf::timespan span) {
  return std::chrono::duration<double>(span).count();
}

} // namespace strom::runtime::sim
