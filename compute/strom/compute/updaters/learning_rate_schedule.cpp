#include "strom/compute/updaters/learning_rate_schedule.hpp"

#include <cmath>
#include <stdexcept>

namespace strom::compute {

learning_rate_schedule learning_rate_schedule::fixed(float rate) {
  return {schedule_kind::fixed, schedule_unit::iteration, rate, 1.0f, 1};
}

learning_rate_schedule learning_rate_schedule::step(float rate, float decay, std::uint32_t every,
                                                    schedule_unit unit) {
  if (every == 0)
    throw std::invalid_argument("learning_rate_schedule::step: every must be >= 1");
  return {schedule_kind::step, unit, rate, decay, every};
}

learning_rate_schedule learning_rate_schedule::exponential(float rate, float gamma,
                                                           schedule_unit unit) {
  return {schedule_kind::exponential, unit, rate, gamma, 1};
}

float learning_rate_schedule::rate_at(std::uint64_t iteration, std::uint32_t epoch) const {
  const std::uint64_t t = unit_ == schedule_unit::iteration ? iteration : epoch;
  // A fixed schedule has factor 1 and every 1, and a step schedule counts whole periods:
  // all three kinds are rate * factor ^ floor(t / every). The power is taken in double so
  // that long runs (t in the millions) keep float precision.
  const auto periods = static_cast<double>(t / every_);
  return static_cast<float>(static_cast<double>(rate_) *
                            std::pow(static_cast<double>(factor_), periods));
}

} // namespace strom::compute
