#pragma once
// Shows training progress to a person: a redrawn bar on a terminal, otherwise one log line
// per interval (so CI logs and files stay readable). The epoch lines are the run's results,
// not diagnostics: they are printed whatever --log-level hides.

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

/// Prints progress to `out` (a bar when it is a terminal).
class progress_display : public training_observer {
public:
  explicit progress_display(std::FILE* out);
  ~progress_display() override;

  void on_step(const step_progress& p) override;
  void on_epoch(const epoch_summary& s) override;

  /// Ends the bar's line, so that what is printed next (an interruption's message) starts
  /// on a line of its own.
  void end_line();

private:
  using clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool terminal_;
  bool bar_drawn_ = false;
  clock::time_point last_print_;
  std::uint32_t epoch_ = 0;        ///< the epoch the steps seen belong to
  clock::time_point epoch_start_;  ///< when its first step was seen
};

} // namespace strom::runtime
