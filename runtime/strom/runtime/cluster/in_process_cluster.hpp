#pragma once
// A cluster that lives in this process: a scheduler and K nodes, each node its own actor
// system. With one node everything shares one system (Deeplearning4j's ParallelWrapper);
// with more, the nodes talk over the real loopback transport, exactly as separate processes
// would. Nodes can be lost (their agent stops with its job's actors, as in a crash the
// scheduler sees at once) and added while a job runs, so multi-node tests can drive losses
// and joins through the same actors a real cluster runs.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/observability/observation.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/transport/guarded_port.hpp"

namespace strom::runtime {

/// The size of an in-process cluster.
struct cluster_shape {
  std::uint32_t nodes = 1;
  std::uint32_t workers = 1;  ///< trainers per node
  std::uint32_t servers = 0;  ///< server nodes besides (parameter shards of kvstore jobs)
  /// The worker nodes' speed factors over the epochs, by index (--node-speeds, --speed-drift;
  /// a testing aid, actors/worker/compute_slowdown.hpp); empty or shorter: the rest run at
  /// full speed.
  std::vector<actors::node_speed> node_speeds{};
  /// Bytes strom may place on each node (--memory-limit); 0: no limit set.
  std::uint64_t memory_limit = 0;
};

/// The actor systems of the cluster; node 0's also hosts the scheduler.
class in_process_cluster {
public:
  /// Starts the systems, the scheduler (keeping to `timeouts`) and one agent per node, and
  /// waits until all joined; `watch` are the hooks its actors report to.
  static result<std::unique_ptr<in_process_cluster>> start(const cluster_shape& shape,
                                                           const observers& watch = {},
                                                           const actors::timing& timeouts = {});

  in_process_cluster(const in_process_cluster&) = delete;
  in_process_cluster& operator=(const in_process_cluster&) = delete;
  ~in_process_cluster();

  /// The system that hosts the scheduler (and node 0).
  caf::actor_system& home() { return *systems_.front(); }

  /// The scheduler.
  const caf::actor& scheduler() const { return scheduler_; }

  /// The id the scheduler gave node `index` (nodes join concurrently, so ids need not follow
  /// the indices).
  std::uint64_t node_id(std::size_t index) const { return node_ids_.at(index); }

  /// Nodes started so far, lost ones included.
  std::size_t size() const { return agents_.size(); }

  /// Node `index` stops its agent and with it its job's actors: the scheduler sees the node
  /// go down, and its relay's messages in flight are gone, as in a crash.
  void lose(std::size_t index);

  /// Starts one more node of `workers` trainers (its own actor system) and waits until it
  /// joined; its index.
  result<std::size_t> add_node(std::uint32_t workers,
                               const std::string& role = actors::node_role_worker);

private:
  in_process_cluster(bool networked, observers watch)
      : networked_(networked), watch_(std::move(watch)) {}

  bool networked_;
  observers watch_;
  std::string admission_token_;
  std::vector<std::unique_ptr<system_config>> configs_;
  std::vector<std::unique_ptr<caf::actor_system>> systems_;
  caf::actor scheduler_;
  std::unique_ptr<guarded_port> port_;     ///< the scheduler's, on loopback
  std::vector<guarded_connection> links_;  ///< nodes 1..K-1 to the scheduler
  std::vector<caf::actor> agents_;
  std::vector<std::uint64_t> node_ids_;    ///< by index
  std::vector<actors::node_speed> node_speeds_;        ///< cluster_shape::node_speeds
  std::uint64_t memory_limit_ = 0;         ///< cluster_shape::memory_limit
};

} // namespace strom::runtime
