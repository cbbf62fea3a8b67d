#pragma once
// Progress of a training run as it goes: the terminal display, log lines, an embedding host
// program and a remote client all see the same two events.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/job/training_report.hpp"

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
  /// Workers taking a batch each step: batch / workers is the step the metrics count
  /// (`iterations`).
  std::uint32_t workers = 1;
};

/// One node's figures in a job so far, as its progress reports give them to the scheduler.
struct node_figures {
  std::string node;                 ///< its name
  std::uint64_t samples = 0;        ///< trained by its workers in the job
  std::uint64_t bytes_sent = 0;     ///< update-frame bytes it framed
  std::uint64_t updates = 0;        ///< worker updates it framed
  double density_sum = 0.0;         ///< sum of each update's values sent / elements
  double threshold = 0.0;           ///< the threshold of its latest update
  std::uint64_t bytes_received = 0; ///< frame bytes its relay took from peers
};

/// A job's nodes and membership changes, as the scheduler tells a client with each progress
/// report (a remote client's node history; in-process runs hear of nodes more directly).
struct cluster_figures {
  std::vector<node_figures> nodes;  ///< by node still in the job
  std::uint32_t nodes_lost = 0;     ///< the job's totals so far
  std::uint32_t nodes_restored = 0;
  std::uint32_t nodes_joined = 0;
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
  std::string checkpoint;  ///< where the epoch's model was saved; empty if nowhere
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
           x.mean_loss, x.samples_per_second, x.eta_seconds, x.nodes_alive, x.workers);
}

template <class F>
typename F::result_type inspect(F& f, epoch_summary& x) {
  return f(caf::meta::type_name("epoch_summary"), x.epoch, x.epochs, x.train_loss, x.test_loss,
           x.test_accuracy, x.seconds, x.samples_per_second, x.checkpoint);
}

template <class F>
typename F::result_type inspect(F& f, node_figures& x) {
  return f(caf::meta::type_name("node_figures"), x.node, x.samples, x.bytes_sent, x.updates,
           x.density_sum, x.threshold, x.bytes_received);
}

template <class F>
typename F::result_type inspect(F& f, cluster_figures& x) {
  return f(caf::meta::type_name("cluster_figures"), x.nodes, x.nodes_lost, x.nodes_restored,
           x.nodes_joined);
}

} // namespace strom::actors
