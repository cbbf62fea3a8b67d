#pragma once
// Hands the actors' numbers to two sinks (Prometheus and a run's history recorder) through
// the one metrics hook the actors have.

#include <memory>

#include "strom/actors/job/metrics_sink.hpp"

namespace strom::runtime {

/// Calls `first`, then `second`, for every figure.
class metrics_tee : public actors::metrics_sink {
public:
  metrics_tee(std::shared_ptr<actors::metrics_sink> first,
              std::shared_ptr<actors::metrics_sink> second)
    : first_(std::move(first)), second_(std::move(second)) {}

  void job(const actors::job_metrics& figures) override {
    first_->job(figures);
    second_->job(figures);
  }
  void heartbeat(const std::string& node, double seconds) override {
    first_->heartbeat(node, seconds);
    second_->heartbeat(node, seconds);
  }
  void node(const actors::node_metrics& figures) override {
    first_->node(figures);
    second_->node(figures);
  }

private:
  std::shared_ptr<actors::metrics_sink> first_;
  std::shared_ptr<actors::metrics_sink> second_;
};

} // namespace strom::runtime
