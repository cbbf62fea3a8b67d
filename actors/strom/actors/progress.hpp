#pragma once
// Progress of a training run as it goes: the terminal display, log lines, an embedding host
// program and a remote client all see the same two events.

#include <cstddef>
#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "strom/actors/training_report.hpp"

namespace strom::actors {

/// Progress within an epoch, reported after each step (or every few steps from a cluster).
struct step_progress {
  std::uint32_t epoch = 0;          ///< 1-based
  std::uint32_t epochs = 0;
  std::uint64_t batch = 0;          ///< batches done in this epoch
  std::uint64_t batches = 0;        ///< batches in this epoch
  double mean_loss = 0.0;           ///< mean training loss so far this epoch
  double samples_per_second = 0.0;  ///< this epoch's training throughput so far
  double eta_seconds = 0.0;         ///< for the whole run
  std::uint32_t nodes_alive = 1;    ///< nodes training the job
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

/// Adds epoch `epoch` (0-based) to `report` and returns its summary: every driver, local or
/// cluster, ends an epoch the same way.
epoch_summary record_epoch(training_report& report, std::uint32_t epoch,
                           const epoch_totals& totals, const test_result& tested);

/// Fills the run-wide figures once the last epoch has ended.
void record_run(training_report& report, double wall_seconds);

template <class F>
typename F::result_type inspect(F& f, step_progress& x) {
  return f(caf::meta::type_name("step_progress"), x.epoch, x.epochs, x.batch, x.batches,
           x.mean_loss, x.samples_per_second, x.eta_seconds, x.nodes_alive);
}

template <class F>
typename F::result_type inspect(F& f, epoch_summary& x) {
  return f(caf::meta::type_name("epoch_summary"), x.epoch, x.epochs, x.train_loss, x.test_loss,
           x.test_accuracy, x.seconds, x.samples_per_second);
}

} // namespace strom::actors
