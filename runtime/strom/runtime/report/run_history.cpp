#include "strom/runtime/report/run_history.hpp"

#include <algorithm>

namespace strom::runtime {

run_recorder::run_recorder(training_observer* next, cluster_source source)
  : next_(next), source_(source), start_(std::chrono::steady_clock::now()) {}

double run_recorder::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void run_recorder::on_step(const step_progress& progress) {
  if (next_)
    next_->on_step(progress);
}

void run_recorder::on_epoch(const epoch_summary& summary) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    // A job that started again from its checkpoint trains the epochs after it again: their
    // new records replace the old.
    auto& epochs = history_.epochs;
    epochs.erase(std::remove_if(epochs.begin(), epochs.end(),
                                [&](const auto& e) { return e.epoch >= summary.epoch; }),
                 epochs.end());
    epochs.push_back({summary.epoch, summary.train_loss, summary.test_loss,
                               summary.test_accuracy, summary.seconds,
                               summary.samples_per_second, seconds_since_start()});
  }
  if (next_)
    next_->on_epoch(summary);
}

void run_recorder::note_membership(const std::string& kind, std::uint32_t count,
                                   std::uint32_t& seen) {
  if (count > seen)
    history_.membership.push_back({seconds_since_start(), kind, count});
  seen = count;
}

void run_recorder::on_cluster(const cluster_figures& figures) {
  if (next_)
    next_->on_cluster(figures);
  if (source_ != cluster_source::scheduler_reports)
    return;
  for (const auto& node : figures.nodes)
    note_node({seconds_since_start(), node.node, node.samples, node.bytes_sent,
               node.bytes_received, node.updates, node.density_sum, node.threshold});
  std::lock_guard<std::mutex> guard{mutex_};
  note_memberships(figures.nodes_lost, figures.nodes_restored, figures.nodes_joined);
}

void run_recorder::note_memberships(std::uint32_t lost, std::uint32_t restored,
                                    std::uint32_t joined) {
  note_membership("lost", lost, lost_seen_);
  note_membership("restored", restored, restored_seen_);
  note_membership("joined", joined, joined_seen_);
}

void run_recorder::job(const actors::job_metrics& figures) {
  if (source_ != cluster_source::metrics_sink)
    return;
  std::lock_guard<std::mutex> guard{mutex_};
  note_memberships(figures.report.nodes_lost, figures.report.nodes_restored,
                   figures.report.nodes_joined);
}

void run_recorder::heartbeat(const std::string&, double) {}

void run_recorder::node(const actors::node_metrics& figures) {
  if (source_ != cluster_source::metrics_sink)
    return;
  std::vector<tensor_record> tensors;
  for (const auto& t : figures.sent.tensors)
    tensors.push_back({t.layer < 0 ? t.tensor
                                   : "layer " + std::to_string(t.layer) + ' ' + t.tensor,
                       t.threshold, t.values_sent, t.encodes, t.elements});
  note_node({seconds_since_start(), figures.node, figures.samples, figures.sent.bytes_sent,
             figures.relayed.bytes_received, figures.sent.updates, figures.sent.density_sum,
             figures.sent.threshold, std::move(tensors)});
}

void run_recorder::note_node(node_record record) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto last = last_record_of_node_.find(record.node);
  if (last != last_record_of_node_.end()) {
    auto& [index, opened_at] = last->second;
    // Within the interval of the record's first figures (or with the list full), the
    // latest figures replace the record's: the chart keeps the newest numbers.
    if (record.at_seconds - opened_at < node_record_interval_seconds
        || history_.nodes.size() >= max_node_records) {
      history_.nodes[index] = std::move(record);
      return;
    }
  } else if (history_.nodes.size() >= max_node_records) {
    return;
  }
  last_record_of_node_[record.node] = {history_.nodes.size(), record.at_seconds};
  history_.nodes.push_back(std::move(record));
}

void run_recorder::set_settings(std::vector<run_setting> settings) {
  std::lock_guard<std::mutex> guard{mutex_};
  history_.settings = std::move(settings);
}

run_history run_recorder::history() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return history_;
}

} // namespace strom::runtime
