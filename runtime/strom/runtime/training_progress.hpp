#pragma once
// What a training run reports while it runs; the terminal display, log lines and an
// embedding host program all observe the same events.

#include <cstddef>
#include <cstdint>

namespace strom::runtime {

/// Progress within an epoch, reported after each step.
struct step_progress {
  std::uint32_t epoch = 0;          ///< 1-based
  std::uint32_t epochs = 0;
  std::size_t batch = 0;            ///< batches done in this epoch
  std::size_t batches = 0;          ///< batches in this epoch
  double mean_loss = 0.0;           ///< mean training loss so far this epoch
  double samples_per_second = 0.0;  ///< this epoch's training throughput so far
  double eta_seconds = 0.0;         ///< for the whole run
};

/// A finished epoch.
struct epoch_summary {
  std::uint32_t epoch = 0;  ///< 1-based
  std::uint32_t epochs = 0;
  double train_loss = 0.0;
  double test_loss = 0.0;
  double test_accuracy = -1.0;  ///< -1 without a test set
  double seconds = 0.0;         ///< training time of the epoch
  double samples_per_second = 0.0;
};

/// Receives progress; the default implementations ignore it.
class training_observer {
public:
  virtual ~training_observer() = default;
  virtual void on_step(const step_progress&) {}
  virtual void on_epoch(const epoch_summary&) {}
};

} // namespace strom::runtime
