#pragma once
// What the scheduler's live dashboard shows (dashboard_page.hpp): the cluster as the scheduler
// knows it (nodes with role, incarnation and speed; jobs with state, progress, topology and
// stall) asked for at each request, beside what this sink recorded from the job masters and
// heartbeats while the jobs ran (each job's loss over time and accuracy by epoch, its nodes'
// lag in the round, each node's heartbeat round trip). Fed from actor threads, read from the
// HTTP server's: every member is behind one mutex.

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_clock.hpp>

#include "strom/actors/job/metrics_sink.hpp"
#include "strom/actors/messages.hpp"

namespace strom::runtime {

/// Asks the scheduler for its view of the cluster; nullopt when it did not answer.
using cluster_view = std::function<std::optional<actors::cluster_status>()>;

class live_cluster : public actors::metrics_sink {
public:
  /// Points kept of a job's loss curve: past it every other one goes (the curve keeps its
  /// shape over any run length, and a page stays small).
  static constexpr std::size_t max_loss_points = 1024;

  /// Where the scheduler's view comes from from now on (empty: none, e.g. before the actor
  /// system it asks through goes); waits for the calls of the former view under way.
  void set_view(cluster_view view);

  /// The dashboard's data as JSON: `nodes`, `jobs` (each with `loss` [[seconds, loss], ...],
  /// `accuracy` [[epoch, accuracy], ...] and `lag`), `seconds` since this record began.
  std::string json() const;

  void job(const actors::job_metrics& figures) override;
  void heartbeat(const std::string& node, double seconds) override;
  void node(const actors::node_metrics&) override {}

private:
  struct job_record {
    std::string name;
    std::uint64_t samples = 0;
    std::uint64_t steps = 0;
    double loss = 0.0;
    std::uint32_t epochs_done = 0;
    double stalled_seconds = 0.0;
    std::vector<actors::node_lag> lag;
    std::vector<std::pair<double, double>> loss_points;  ///< seconds, loss
    std::vector<std::pair<std::uint32_t, double>> accuracy;  ///< epoch (1-based), accuracy
  };

  double seconds_now() const;

  mutable std::mutex mutex_;
  mutable std::condition_variable view_idle_;
  cluster_view view_;
  mutable std::size_t view_calls_ = 0;  ///< json() calls asking the view now
  caf::actor_clock::time_point began_ = caf::actor_clock::clock_type::now();
  std::map<std::uint64_t, job_record> jobs_;
  std::map<std::string, double> rtt_;  ///< by node name: the latest heartbeat's seconds
};

} // namespace strom::runtime
