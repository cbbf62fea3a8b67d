#include "strom/runtime/report/run_history.hpp"

namespace strom::runtime {

run_recorder::run_recorder(training_observer* next)
  : next_(next), start_(std::chrono::steady_clock::now()) {}

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
    history_.epochs.push_back({summary.epoch, summary.train_loss, summary.test_loss,
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

void run_recorder::job(const actors::job_metrics& figures) {
  std::lock_guard<std::mutex> guard{mutex_};
  note_membership("lost", figures.report.nodes_lost, lost_seen_);
  note_membership("restored", figures.report.nodes_restored, restored_seen_);
  note_membership("joined", figures.report.nodes_joined, joined_seen_);
}

void run_recorder::heartbeat(const std::string&, double) {}

void run_recorder::node(const actors::node_metrics& figures) {
  node_record record{seconds_since_start(),
                     figures.node,
                     figures.samples,
                     figures.sent.bytes_sent,
                     figures.relayed.bytes_received,
                     figures.sent.updates,
                     figures.sent.density_sum,
                     figures.sent.threshold};
  std::lock_guard<std::mutex> guard{mutex_};
  auto last = last_record_of_node_.find(figures.node);
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
  last_record_of_node_[figures.node] = {history_.nodes.size(), record.at_seconds};
  history_.nodes.push_back(std::move(record));
}

run_history run_recorder::history() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return history_;
}

} // namespace strom::runtime
