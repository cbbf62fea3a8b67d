#pragma once
// What a training run reports while it runs; the terminal display, log lines and an
// embedding host program all observe the same events.

#include "strom/actors/job/progress.hpp"

namespace strom::runtime {

using actors::cluster_figures;
using actors::epoch_summary;
using actors::step_progress;

/// Receives progress; the default implementations ignore it.
class training_observer {
public:
  virtual ~training_observer() = default;
  virtual void on_step(const step_progress&) {}
  virtual void on_epoch(const epoch_summary&) {}
  /// With each progress report a scheduler sends its clients: the job's nodes and membership.
  virtual void on_cluster(const cluster_figures&) {}
};

} // namespace strom::runtime
