#include "strom/runtime/cluster_training.hpp"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "strom/actors/scheduler.hpp"
#include "strom/log.hpp"
#include "strom/runtime/job_client.hpp"
#include "strom/runtime/node_daemon.hpp"
#include "strom/runtime/node_startup.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/training_setup.hpp"
#include "strom/runtime/transport/guarded_port.hpp"

namespace strom::runtime {

namespace {

/// Where the in-process scheduler listens: loopback, a free port.
constexpr const char* loopback = "127.0.0.1";

/// Time for every node to hear back from the scheduler after asking to join.
constexpr auto join_wait = std::chrono::seconds(30);

/// The actor systems of the cluster; node 0's also hosts the scheduler.
struct in_process_cluster {
  std::vector<std::unique_ptr<system_config>> configs;
  std::vector<std::unique_ptr<caf::actor_system>> systems;
  caf::actor scheduler;
  std::unique_ptr<guarded_port> port;       ///< the scheduler's, on loopback
  std::vector<guarded_connection> links;    ///< nodes 1..K-1 to the scheduler
  std::vector<caf::actor> agents;

  ~in_process_cluster() {
    for (const auto& agent : agents)
      caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
    if (scheduler)
      caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    agents.clear();
    scheduler = nullptr;
    // Remote nodes go first: each system waits for its own actors when destroyed. The
    // scheduler's port closes before the system it hands peers to.
    while (systems.size() > 1)
      systems.pop_back();
    links.clear();
    port.reset();
    systems.clear();
  }
};

/// Starts the systems, the scheduler and one agent per node, and waits until all joined.
result<void> start(in_process_cluster& cluster, const cluster_shape& shape) {
  const bool networked = shape.nodes > 1;
  for (std::uint32_t i = 0; i < shape.nodes; ++i) {
    cluster.configs.push_back(std::make_unique<system_config>(networked));
    cluster.systems.push_back(std::make_unique<caf::actor_system>(*cluster.configs.back()));
  }
  auto& home = *cluster.systems.front();
  // The loopback port is open to every process on the machine: only nodes that bring the
  // token, which this process alone knows, may join.
  actors::scheduler_setup setup;
  setup.admission_token = make_admission_token();
  cluster.scheduler = home.spawn(actors::scheduler, setup);
  if (networked) {
    auto port = guarded_port::open(home, cluster.scheduler, {loopback, 0});
    if (!port)
      return error{"cannot publish the scheduler: " + port.err().message};
    cluster.port = std::move(*port);
  }
  caf::scoped_actor self{home};
  for (std::uint32_t i = 0; i < shape.nodes; ++i) {
    auto& system = *cluster.systems[i];
    caf::actor scheduler = cluster.scheduler;
    if (i > 0) {
      auto link = connect_to_scheduler(system, {loopback, cluster.port->port()});
      if (!link)
        return error{fmt::format("node {}: {}", i, link.err().message)};
      scheduler = link->remote;
      cluster.links.push_back(std::move(*link));
    }
    const node_identity identity{fmt::format("node-{}", i), networked ? loopback : "in-process",
                                 shape.workers, setup.admission_token,
                                 networked ? loopback : ""};
    cluster.agents.push_back(
      spawn_node(system, scheduler, identity, caf::actor_cast<caf::actor>(self)));
  }
  if (auto joined = await_joins(self, shape.nodes, join_wait); !joined)
    return joined;
  if (networked)
    log::info("in-process cluster: {} nodes joined the scheduler on {}:{}", shape.nodes, loopback,
              cluster.port->port());
  return success();
}

} // namespace

result<training_report> train_on_cluster(job_spec& job, const local_training_options& options,
                                         const cluster_shape& shape) {
  const auto run_start = training_clock::now();
  if (shape.nodes == 0 || shape.workers == 0)
    return error{fmt::format("{}: a cluster needs at least one node and one worker per node",
                             job.source())};
  auto submission = make_submission(job, options, shape.nodes);
  if (!submission)
    return submission.err();

  in_process_cluster cluster;
  if (auto started = start(cluster, shape); !started)
    return error{fmt::format("{}: {}", job.source(), started.err().message)};
  auto report = run_job(*cluster.systems.front(), cluster.scheduler, *submission, options.observer);
  if (!report)
    return error{fmt::format("{}: {}", job.source(), report.err().message)};
  report->wall_seconds = seconds_since(run_start);
  return report;
}

} // namespace strom::runtime
