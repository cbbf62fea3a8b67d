#pragma once
// Shows training progress to a person: a redrawn bar on a terminal, otherwise one log line
// per interval (so CI logs and files stay readable).

#include <chrono>
#include <cstdio>

#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

/// Prints progress to `out` (a bar when it is a terminal).
class progress_display : public training_observer {
public:
  explicit progress_display(std::FILE* out);

  void on_step(const step_progress& p) override;
  void on_epoch(const epoch_summary& s) override;

private:
  using clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool terminal_;
  bool bar_drawn_ = false;
  clock::time_point last_print_;
};

} // namespace strom::runtime
