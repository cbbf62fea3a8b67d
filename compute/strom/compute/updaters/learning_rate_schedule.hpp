#pragma once
// The learning rate as a function of training progress. The rate is computed once per step
// and handed to the updater in step_context, so schedules never touch per-element loops.

#include <cstdint>

namespace strom::compute {

/// What a schedule counts: updater steps or completed epochs.
enum class schedule_unit { iteration, epoch };

/// How the rate changes with t.
enum class schedule_kind {
  fixed,        ///< rate
  step,         ///< rate * decay ^ floor(t / every)
  exponential,  ///< rate * gamma ^ t
};

/// A learning rate schedule: a plain value, built by one of the named constructors.
class learning_rate_schedule {
public:
  /// Always `rate`.
  static learning_rate_schedule fixed(float rate);
  /// rate * decay ^ floor(t / every); throws std::invalid_argument if every == 0.
  static learning_rate_schedule step(float rate, float decay, std::uint32_t every,
                                     schedule_unit unit);
  /// rate * gamma ^ t.
  static learning_rate_schedule exponential(float rate, float gamma, schedule_unit unit);

  /// The rate for a step taken after `iteration` steps and `epoch` completed epochs.
  float rate_at(std::uint64_t iteration, std::uint32_t epoch) const;

  /// The shape of the schedule.
  schedule_kind kind() const noexcept { return kind_; }
  /// What t counts.
  schedule_unit unit() const noexcept { return unit_; }
  /// The rate at t = 0.
  float initial_rate() const noexcept { return rate_; }
  /// The factor applied per period: decay for step, gamma for exponential, 1 for fixed.
  float factor() const noexcept { return factor_; }
  /// The period of a step schedule in units of t (1 for the other kinds).
  std::uint32_t every() const noexcept { return every_; }

  friend bool operator==(const learning_rate_schedule&, const learning_rate_schedule&) = default;

private:
  learning_rate_schedule(schedule_kind kind, schedule_unit unit, float rate, float factor,
                         std::uint32_t every)
      : kind_(kind), unit_(unit), rate_(rate), factor_(factor), every_(every) {}

  schedule_kind kind_;
  schedule_unit unit_;
  float rate_;
  float factor_;
  std::uint32_t every_;
};

} // namespace strom::compute
