#pragma once
// What a run did over time, kept for its HTML report (report/html_page.hpp) and written into
// the metrics JSON (`epoch_history`, `node_history`, `membership_events`): the epochs as the
// client saw them end, each node's cumulative figures as its node agent reported them (a few
// times a second; the samples, frame bytes, threshold and density of the node's workers) and
// the job's losses, restores and joins. The run_recorder takes these from the places the
// numbers already arrive at: the training observer (epochs, in every command that trains) and
// either the metrics sink (nodes and membership, in the process that runs the actors) or the
// scheduler's progress reports to a client (`strom submit`, whose scheduler runs elsewhere).

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "strom/actors/job/metrics_sink.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

/// A finished epoch, as the client saw it end.
struct epoch_record {
  std::uint32_t epoch = 0;  ///< 1-based
  double train_loss = 0.0;
  double test_loss = 0.0;
  double test_accuracy = -1.0;  ///< -1 without a test set
  double seconds = 0.0;         ///< training time of the epoch
  double samples_per_second = 0.0;
  double at_seconds = 0.0;      ///< since the run started
};

/// One tensor's sharing on a node at one moment (tensor_sharing.hpp), cumulative.
struct tensor_record {
  std::string tensor;  ///< "layer 0 weights", "layer 0 biases", or "all"
  double threshold = 0.0;     ///< its latest threshold (0: sent dense)
  std::uint64_t values_sent = 0;
  std::uint64_t encodes = 0;
  std::uint64_t elements = 0;
};

/// A node's cumulative figures in the job at one moment.
struct node_record {
  double at_seconds = 0.0;  ///< since the run started
  std::string node;         ///< the node's name
  std::uint64_t samples = 0;
  std::uint64_t bytes_sent = 0;      ///< update-frame bytes the node framed
  std::uint64_t bytes_received = 0;  ///< frame bytes its relay took from peers
  std::uint64_t updates = 0;         ///< worker updates framed
  double density_sum = 0.0;          ///< sum of each update's values sent / elements
  double threshold = 0.0;            ///< the threshold of the latest update
  std::vector<tensor_record> tensors;  ///< each tensor's sharing (empty: not shared)
};

/// A change of the job's membership: `count` is the job's total of `kind` from then on.
struct membership_record {
  double at_seconds = 0.0;
  std::string kind;  ///< "lost", "restored" or "joined"
  std::uint32_t count = 0;
};

/// A setting of the run, as its report lists it: ("batch size", "64").
using run_setting = std::pair<std::string, std::string>;

/// Everything recorded, in the order it happened.
struct run_history {
  std::vector<run_setting> settings;  ///< the command line and hyperparameters it ran with
  std::vector<epoch_record> epochs;
  std::vector<node_record> nodes;
  std::vector<membership_record> membership;
};

/// A node's figures closer together than this replace its previous record instead of adding
/// one: node agents report several times a second, and a chart needs no more than this.
inline constexpr double node_record_interval_seconds = 0.25;
/// Node records kept at most (then the last one of each node is only updated): about 7 hours
/// of one node at node_record_interval_seconds, 5 MB of JSON.
inline constexpr std::size_t max_node_records = 100'000;

/// Where a run_recorder takes the nodes' figures and membership changes from.
enum class cluster_source {
  metrics_sink,       ///< this process runs the actors (strom train)
  scheduler_reports,  ///< a client of a remote scheduler (training_observer::on_cluster)
};

/// Records a run's history; passes epochs on to `next`. Thread-safe: the actors of several
/// in-process nodes report to one.
class run_recorder : public actors::metrics_sink, public training_observer {
public:
  explicit run_recorder(training_observer* next = nullptr,
                        cluster_source source = cluster_source::metrics_sink);

  // -- training_observer ---------------------------------------------------------------------
  void on_step(const step_progress& progress) override;
  void on_epoch(const epoch_summary& summary) override;
  void on_cluster(const cluster_figures& figures) override;

  // -- actors::metrics_sink ------------------------------------------------------------------
  void job(const actors::job_metrics& figures) override;
  void heartbeat(const std::string& node, double seconds) override;
  void node(const actors::node_metrics& figures) override;

  /// The run's settings, which the command that started it knows.
  void set_settings(std::vector<run_setting> settings);

  /// What was recorded so far (a copy).
  run_history history() const;

private:
  double seconds_since_start() const;
  void note_membership(const std::string& kind, std::uint32_t count, std::uint32_t& seen);
  void note_memberships(std::uint32_t lost, std::uint32_t restored, std::uint32_t joined);
  void note_node(node_record record);

  training_observer* next_;
  cluster_source source_;
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  run_history history_;
  /// By node: its last record's index in history_.nodes, and when that record was opened.
  std::map<std::string, std::pair<std::size_t, double>> last_record_of_node_;
  std::uint32_t lost_seen_ = 0;
  std::uint32_t restored_seen_ = 0;
  std::uint32_t joined_seen_ = 0;
};

} // namespace strom::runtime
