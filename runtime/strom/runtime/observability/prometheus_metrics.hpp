#pragma once
// strom's Prometheus metrics, in one registry: the actors' figures (metrics_sink.hpp) as
// `strom_` families, labelled by job and node. The actors call it a few times a second at
// most (progress reports, heartbeats), so one mutex is enough; a scrape reads the registry
// (prometheus-cpp's metrics are atomics) without it.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "strom/actors/job/metrics_sink.hpp"

namespace strom::runtime {

/// The registry and its families; a metrics_sink for the scheduler's, job_masters' and node
/// agents' figures.
class prometheus_metrics final : public actors::metrics_sink {
public:
  prometheus_metrics();

  /// What a metrics_endpoint serves.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void job(const actors::job_metrics& figures) override;
  void heartbeat(const std::string& node, double seconds) override;
  void node(const actors::node_metrics& figures) override;

private:
  using counters = prometheus::Family<prometheus::Counter>;
  using gauges = prometheus::Family<prometheus::Gauge>;

  /// Raises the counter of `labels` to `total` (figures arrive as totals so far).
  static void raise(counters& family, const prometheus::Labels& labels, double total);
  static void set(gauges& family, const prometheus::Labels& labels, double value);

  std::mutex mutex_;
  std::shared_ptr<prometheus::Registry> registry_;
  // -- a job, from its job_master ----------------------------------------------------------
  counters& samples_;
  counters& steps_;
  gauges& loss_;
  gauges& accuracy_;
  gauges& epochs_;
  gauges& state_;
  gauges& nodes_alive_;
  counters& nodes_lost_;
  counters& nodes_restored_;
  counters& nodes_joined_;
  counters& bytes_sent_;
  counters& bytes_received_;
  counters& updates_applied_;
  counters& duplicates_;
  counters& rejected_;
  gauges& threshold_;
  gauges& density_;
  gauges& node_steps_;
  gauges& node_lag_;
  gauges& stalled_;
  // -- the cluster, from the scheduler -------------------------------------------------------
  gauges& heartbeat_rtt_;
  // -- a node, from its agent ---------------------------------------------------------------
  counters& node_samples_;
  counters& node_steps_trained_;
  gauges& node_loss_;
  counters& node_bytes_sent_;
  counters& node_bytes_received_;
  counters& node_updates_;
  counters& node_duplicates_;
  counters& node_rejected_;
  gauges& node_threshold_;
  gauges& node_density_;
  gauges& node_tensor_threshold_;
  gauges& node_tensor_density_;
  gauges& node_tensor_clipped_;
};

} // namespace strom::runtime
