#include "strom/runtime/observability/live_cluster.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

namespace strom::runtime {

namespace {

using nlohmann::json;

/// The scheduler's view of a node, with its latest heartbeat's round trip (null: none yet).
json node_json(const actors::node_status& node, const std::map<std::string, double>& rtt) {
  json out{{"id", node.node_id},
           {"name", node.name},
           {"address", node.address},
           {"role", node.role},
           {"incarnation", node.incarnation},
           {"workers", node.workers},
           {"speed", node.speed_factor},
           {"rate", node.compute_rate},
           {"rtt", nullptr}};
  if (const auto seen = rtt.find(node.name); seen != rtt.end())
    out["rtt"] = seen->second;
  return out;
}

/// The scheduler's view of a job; its test accuracy is null before the first evaluation.
json job_json(const actors::job_status& job) {
  json out{{"id", job.job_id},          {"name", job.name},
           {"state", job.state},        {"epoch", job.epoch},
           {"epochs", job.epochs},      {"nodes", job.nodes},
           {"lost", job.nodes_lost},    {"restored", job.nodes_restored},
           {"joined", job.nodes_joined}, {"topology", job.topology},
           {"stall", job.stall},        {"failure", job.failure},
           {"test_accuracy", nullptr}};
  if (job.test_accuracy >= 0)
    out["test_accuracy"] = job.test_accuracy;
  return out;
}

} // namespace

void live_cluster::set_view(cluster_view view) {
  std::unique_lock lock{mutex_};
  view_idle_.wait(lock, [this] { return view_calls_ == 0; });
  view_ = std::move(view);
}

double live_cluster::seconds_now() const {
  return std::chrono::duration<double>(caf::actor_clock::clock_type::now() - began_).count();
}

void live_cluster::job(const actors::job_metrics& figures) {
  std::lock_guard lock{mutex_};
  auto& record = jobs_[figures.job_id];
  record.name = figures.job;
  record.stalled_seconds = figures.stalled_seconds;
  record.lag = figures.lag;
  if (figures.steps > record.steps) {
    auto& points = record.loss_points;
    if (points.size() == max_loss_points) {  // every other point goes
      for (std::size_t i = 1; i < points.size() / 2; ++i)
        points[i] = points[2 * i];
      points.resize(points.size() / 2);
    }
    points.emplace_back(seconds_now(), figures.loss);
  }
  if (figures.epochs_done > record.epochs_done && figures.report.test_accuracy >= 0)
    record.accuracy.emplace_back(figures.epochs_done, figures.report.test_accuracy);
  record.samples = figures.samples;
  record.steps = figures.steps;
  record.loss = figures.loss;
  record.epochs_done = figures.epochs_done;
}

void live_cluster::heartbeat(const std::string& node, double seconds) {
  std::lock_guard lock{mutex_};
  rtt_[node] = seconds;
}

std::string live_cluster::json() const {
  // The scheduler is asked without the lock: the sinks' callers (actor threads) never wait
  // for an HTTP request.
  cluster_view view;
  {
    std::lock_guard lock{mutex_};
    view = view_;
    ++view_calls_;
  }
  std::optional<actors::cluster_status> status;
  if (view)
    status = view();
  std::unique_lock lock{mutex_};
  --view_calls_;
  view_idle_.notify_all();
  nlohmann::json out{{"seconds", seconds_now()},
                     {"scheduler", status.has_value()},
                     {"nodes", nlohmann::json::array()},
                     {"jobs", nlohmann::json::array()}};
  if (!status)
    return out.dump();
  out["membership_epoch"] = status->membership_epoch;
  for (const auto& node : status->nodes)
    out["nodes"].push_back(node_json(node, rtt_));
  for (const auto& job : status->jobs) {
    auto shown = job_json(job);
    shown["loss"] = nlohmann::json::array();
    shown["accuracy"] = nlohmann::json::array();
    shown["lag"] = nlohmann::json::array();
    if (const auto found = jobs_.find(job.job_id); found != jobs_.end()) {
      const auto& record = found->second;
      shown["samples"] = record.samples;
      shown["steps"] = record.steps;
      shown["current_loss"] = record.loss;
      shown["stalled_seconds"] = record.stalled_seconds;
      for (const auto& [seconds, loss] : record.loss_points)
        shown["loss"].push_back({seconds, loss});
      for (const auto& [epoch, accuracy] : record.accuracy)
        shown["accuracy"].push_back({epoch, accuracy});
      for (const auto& lag : record.lag)
        shown["lag"].push_back({{"node", lag.node}, {"steps", lag.steps}, {"behind", lag.behind}});
    }
    out["jobs"].push_back(std::move(shown));
  }
  return out.dump();
}

} // namespace strom::runtime
