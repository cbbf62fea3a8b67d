// The job_master's figures for a metrics sink (metrics_sink.hpp): what the job trained so far,
// node by node in the round under way, and its report. Built only when a sink watches, on the
// progress reports and status changes the job_master handles anyway.

#include <algorithm>

#include "strom/actors/job/job_master_steps.hpp"

namespace strom::actors::job_steps {

namespace {

/// A node's steps in the current round: its epoch report once it finished, else its progress.
epoch_totals round_totals(const job_master_state& st, std::uint64_t node) {
  if (const auto done = st.epoch_reports.find(node); done != st.epoch_reports.end())
    return done->second.totals;
  epoch_totals live;
  if (const auto progress = st.progress.find(node); progress != st.progress.end()) {
    live.batches = progress->second.batches;
    live.samples = progress->second.samples;
    live.loss_sum = progress->second.loss_sum;
  }
  return live;
}

} // namespace

void publish_metrics(self_ptr self, const job_master_setup& setup) {
  if (!setup.metrics)
    return;
  const auto& st = self->state;
  job_metrics figures;
  figures.job_id = st.status.job_id;
  figures.job = st.status.name;
  figures.state = st.status.state;
  figures.epochs_done = st.status.epoch;
  // An ended job trains on no node, though its nodes stay listed until they stopped it.
  const bool ended = st.status.state != "preparing" && st.status.state != "training";
  figures.nodes_alive = ended ? 0 : static_cast<std::uint32_t>(st.nodes.size());
  figures.report = st.report;
  // The epoch under way: its finished rounds, and the nodes still in the current one.
  epoch_totals epoch = st.epoch_done;
  for (const auto& [id, progress] : st.progress)
    if (st.epoch_reports.count(id) == 0) {
      epoch.batches += progress.batches;
      epoch.samples += progress.samples;
      epoch.loss_sum += progress.loss_sum;
    }
  figures.samples = st.report.train_samples + epoch.samples;
  figures.steps = st.steps_done + epoch.batches;
  figures.loss = epoch.batches ? epoch.loss_sum / epoch.batches : st.report.final_loss;
  double fastest = 0.0;
  for (const auto id : st.nodes) {
    const auto workers = st.prepared.count(id) ? std::max(st.prepared.at(id).workers, 1u) : 1u;
    node_lag lag;
    lag.node = st.members.at(id).status.name;
    lag.steps = static_cast<double>(round_totals(st, id).batches) / workers;
    fastest = std::max(fastest, lag.steps);
    figures.lag.push_back(std::move(lag));
  }
  for (auto& lag : figures.lag)
    lag.behind = fastest - lag.steps;
  if (st.stall.stalled_on)
    figures.stalled_seconds = seconds_between(st.stall.stalled_since, self->clock().now());
  // While the job runs, the bytes come from the nodes' progress reports (the counters of a
  // node lost since drop out, so a sum may fall: the sink only ever raises a counter); the
  // report's own totals once the job ended.
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const auto& [id, progress] : st.progress) {
    sent += progress.sent.bytes_sent;
    received += progress.bytes_received;
  }
  std::uint64_t relayed = 0;
  for (const auto& [id, node] : st.sharing)
    relayed += node.relayed.bytes_received;
  figures.report.bytes_sent = std::max(figures.report.bytes_sent, sent);
  figures.bytes_received = std::max(relayed, received);
  setup.metrics->job(figures);
}

} // namespace strom::actors::job_steps
