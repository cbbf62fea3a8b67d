#include "strom/runtime/observability/prometheus_metrics.hpp"

#include <string>

namespace strom::runtime {

namespace {

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& registry,
                                                 const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& registry,
                                             const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

} // namespace

prometheus_metrics::prometheus_metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      samples_(counter(*registry_, "strom_samples_trained_total",
                       "Samples a job trained, every epoch and node")),
      steps_(counter(*registry_, "strom_steps_trained_total", "Worker steps a job took")),
      loss_(gauge(*registry_, "strom_loss", "Mean training loss of the job's epoch so far")),
      accuracy_(gauge(*registry_, "strom_test_accuracy",
                      "Test accuracy after the job's latest epoch (absent before the first "
                      "evaluation and without a test set)")),
      epochs_(gauge(*registry_, "strom_epochs_completed", "Epochs the job finished")),
      state_(gauge(*registry_, "strom_job_state",
                   "1 for the state the job is in (label state), 0 for the others")),
      nodes_alive_(gauge(*registry_, "strom_nodes_alive", "Nodes training the job")),
      nodes_lost_(counter(*registry_, "strom_nodes_lost_total", "Nodes the job lost")),
      nodes_restored_(counter(*registry_, "strom_nodes_restored_total",
                              "Nodes brought back into the job")),
      nodes_joined_(counter(*registry_, "strom_nodes_joined_total",
                            "New nodes that joined the job while it ran")),
      bytes_sent_(counter(*registry_, "strom_bytes_sent_total",
                          "Update-frame bytes the job's nodes sent (at the job's end)")),
      bytes_received_(counter(*registry_, "strom_bytes_received_total",
                              "Frame bytes the job's node relays received (at the end)")),
      updates_applied_(counter(*registry_, "strom_frames_applied_total",
                               "Update frames the job's workers applied")),
      duplicates_(counter(*registry_, "strom_duplicates_dropped_total",
                          "Duplicate frames the job's relays dropped (at the end)")),
      rejected_(counter(*registry_, "strom_frames_rejected_total",
                        "Unreadable frames the job dropped")),
      threshold_(gauge(*registry_, "strom_threshold",
                       "The encoder's threshold at the job's end")),
      density_(gauge(*registry_, "strom_update_density",
                     "Values sent per element, mean over the job's worker updates")),
      node_steps_(gauge(*registry_, "strom_node_round_steps",
                        "A worker's steps in the current round, by node")),
      node_lag_(gauge(*registry_, "strom_node_lag_steps",
                      "Steps a node is behind the job's fastest node in the current round")),
      stalled_(gauge(*registry_, "strom_stalled_seconds",
                     "How long the job's steps have waited beyond the stall warning; 0: not")),
      heartbeat_rtt_(gauge(*registry_, "strom_heartbeat_rtt_seconds",
                           "Round-trip time of the latest heartbeat, by node")),
      node_samples_(counter(*registry_, "strom_node_samples_trained_total",
                            "Samples this node's workers trained, by job")),
      node_steps_trained_(counter(*registry_, "strom_node_steps_trained_total",
                                  "Steps this node's workers took, by job")),
      node_loss_(gauge(*registry_, "strom_node_loss",
                       "Mean training loss of this node's steps in the job")),
      node_bytes_sent_(counter(*registry_, "strom_node_bytes_sent_total",
                               "Update-frame bytes this node framed and sent")),
      node_bytes_received_(counter(*registry_, "strom_node_bytes_received_total",
                                   "Frame bytes this node's relay received from peers")),
      node_updates_(counter(*registry_, "strom_node_updates_framed_total",
                            "Worker updates this node framed")),
      node_duplicates_(counter(*registry_, "strom_node_duplicates_dropped_total",
                               "Duplicate frames this node's relay dropped")),
      node_rejected_(counter(*registry_, "strom_node_frames_rejected_total",
                             "Unreadable frames this node's relay dropped")),
      node_threshold_(gauge(*registry_, "strom_node_threshold",
                            "The threshold of this node's latest update")),
      node_density_(gauge(*registry_, "strom_node_update_density",
                          "Values sent per element, mean over this node's updates")),
      node_tensor_threshold_(gauge(*registry_, "strom_node_sharing_threshold",
                                   "Latest threshold of a tensor, mean over this node's "
                                   "workers (0: sent dense)")),
      node_tensor_density_(gauge(*registry_, "strom_node_sharing_density",
                                 "Elements of a tensor sent per element and step, this node")),
      node_tensor_clipped_(gauge(*registry_, "strom_node_sharing_clipped_fraction",
                                 "Share of a tensor's update mass residual clipping removed, "
                                 "this node")) {}

void prometheus_metrics::raise(counters& family, const prometheus::Labels& labels,
                               double total) {
  auto& metric = family.Add(labels);
  if (const double by = total - metric.Value(); by > 0)
    metric.Increment(by);
}

void prometheus_metrics::set(gauges& family, const prometheus::Labels& labels, double value) {
  family.Add(labels).Set(value);
}

namespace {

/// The label naming a job: not `job`, which Prometheus sets on every target it scrapes (and
/// renames a target's own to `exported_job`).
constexpr const char* job_label = "strom_job";

/// Every state a job_master reports: one series each, as kube-state-metrics shows a pod's
/// phase, so that a query need not know which states exist.
constexpr const char* job_states[] = {"preparing", "training", "restarting", "succeeded",
                                      "cancelled", "failed"};

} // namespace

void prometheus_metrics::job(const actors::job_metrics& figures) {
  const prometheus::Labels job{{job_label, std::to_string(figures.job_id)},
                               {"name", figures.job}};
  const auto& report = figures.report;
  std::lock_guard lock{mutex_};
  raise(samples_, job, static_cast<double>(figures.samples));
  raise(steps_, job, static_cast<double>(figures.steps));
  set(loss_, job, figures.loss);
  if (report.test_accuracy >= 0)  // no placeholder before the first evaluation
    set(accuracy_, job, report.test_accuracy);
  set(epochs_, job, figures.epochs_done);
  for (const char* state : job_states) {
    auto in_state = job;
    in_state["state"] = state;
    set(state_, in_state, figures.state == state ? 1.0 : 0.0);
  }
  set(nodes_alive_, job, figures.nodes_alive);
  raise(nodes_lost_, job, report.nodes_lost);
  raise(nodes_restored_, job, report.nodes_restored);
  raise(nodes_joined_, job, report.nodes_joined);
  raise(bytes_sent_, job, static_cast<double>(report.bytes_sent));
  raise(bytes_received_, job, static_cast<double>(figures.bytes_received));
  raise(updates_applied_, job, static_cast<double>(report.updates_applied));
  raise(duplicates_, job, static_cast<double>(report.duplicate_updates_dropped));
  raise(rejected_, job, static_cast<double>(report.frames_rejected));
  set(threshold_, job, report.final_threshold);
  set(density_, job, report.mean_density);
  set(stalled_, job, figures.stalled_seconds);
  for (const auto& lag : figures.lag) {
    const prometheus::Labels node{{job_label, std::to_string(figures.job_id)},
                                  {"node", lag.node}};
    set(node_steps_, node, lag.steps);
    set(node_lag_, node, lag.behind);
  }
}

void prometheus_metrics::heartbeat(const std::string& node, double seconds) {
  std::lock_guard lock{mutex_};
  set(heartbeat_rtt_, {{"node", node}}, seconds);
}

void prometheus_metrics::node(const actors::node_metrics& figures) {
  const prometheus::Labels labels{{"node", figures.node},
                                  {job_label, std::to_string(figures.job_id)}};
  std::lock_guard lock{mutex_};
  raise(node_samples_, labels, static_cast<double>(figures.samples));
  raise(node_steps_trained_, labels, static_cast<double>(figures.steps));
  set(node_loss_, labels, figures.steps ? figures.loss_sum / figures.steps : 0.0);
  raise(node_bytes_sent_, labels, static_cast<double>(figures.sent.bytes_sent));
  raise(node_bytes_received_, labels, static_cast<double>(figures.relayed.bytes_received));
  raise(node_updates_, labels, static_cast<double>(figures.sent.updates));
  raise(node_duplicates_, labels, static_cast<double>(figures.relayed.duplicates_dropped));
  raise(node_rejected_, labels, static_cast<double>(figures.relayed.frames_rejected));
  set(node_threshold_, labels, figures.sent.threshold);
  set(node_density_, labels,
      figures.sent.updates ? figures.sent.density_sum / figures.sent.updates : 0.0);
  for (const auto& tensor : figures.sent.tensors) {
    auto by_tensor = labels;
    by_tensor["layer"] = tensor.layer < 0 ? "all" : std::to_string(tensor.layer);
    by_tensor["tensor"] = tensor.tensor;
    set(node_tensor_threshold_, by_tensor, tensor.threshold);
    set(node_tensor_density_, by_tensor, actors::density(tensor));
    set(node_tensor_clipped_, by_tensor, actors::clipped_fraction(tensor));
  }
}

} // namespace strom::runtime
