#pragma once
// Where the actors hand over the numbers an operator watches (Prometheus's /metrics; the
// runtime implements it in runtime/strom/runtime/observability/). A plain interface called
// from the handlers the numbers already arrive at, a few times a second at most: a
// job_master's progress and epochs, a heartbeat's answer, a node agent's progress report.
// Never from a trainer's step. Null where nobody watches. Implementations are thread-safe:
// the actors of several nodes (an in-process cluster) call one.

#include <cstdint>
#include <string>
#include <vector>

#include "strom/actors/job/training_report.hpp"
#include "strom/actors/protocol/sharing.hpp"

namespace strom::actors {

/// One node of a job in the round under way, as its job_master sees it.
struct node_lag {
  std::string node;         ///< its name
  double steps = 0.0;       ///< a worker's steps in the round (the node's steps / workers)
  double behind = 0.0;      ///< steps behind the job's fastest node
};

/// A job as its job_master sees it now.
struct job_metrics {
  std::uint64_t job_id = 0;
  std::string job;               ///< the job's name
  std::string state;             ///< preparing, training, succeeded, cancelled or failed
  std::uint64_t samples = 0;     ///< trained so far, every epoch and node
  std::uint64_t steps = 0;       ///< worker steps so far
  double loss = 0.0;             ///< mean training loss of the epoch so far
  std::uint32_t epochs_done = 0;
  std::uint32_t nodes_alive = 0;
  std::vector<node_lag> lag;     ///< by node, this round
  /// The report so far: accuracy, membership counts, frames applied after each epoch, the
  /// bytes the nodes framed as their progress reports count them; the other sharing counts
  /// (duplicates, threshold, density) once the job ended.
  training_report report;
  std::uint64_t bytes_received = 0;  ///< frame bytes the relays took from peers so far
  double stalled_seconds = 0.0;  ///< how long the job's steps have waited (stall_watch.hpp)
};

/// One node's part of a job, as its node agent sees it.
struct node_metrics {
  std::string node;            ///< the node's name
  std::uint64_t job_id = 0;
  std::uint64_t samples = 0;   ///< trained by the node's workers in this job
  std::uint64_t steps = 0;
  double loss_sum = 0.0;       ///< of those steps' mean losses
  framing_stats sent;          ///< what the node framed
  relay_stats relayed;         ///< what its relay saw
};

/// Receives the numbers; see above.
class metrics_sink {
public:
  virtual ~metrics_sink() = default;
  /// A job's figures changed (progress, an epoch, its end).
  virtual void job(const job_metrics& figures) = 0;
  /// A heartbeat to `node` came back after `seconds`.
  virtual void heartbeat(const std::string& node, double seconds) = 0;
  /// A node's own figures changed.
  virtual void node(const node_metrics& figures) = 0;
};

} // namespace strom::actors
