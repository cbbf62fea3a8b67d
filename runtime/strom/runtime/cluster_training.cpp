#include "strom/runtime/cluster_training.hpp"

#include <fmt/format.h>

#include <optional>

#include <memory>
#include <thread>
#include <vector>

#include <caf/io/middleman.hpp>

#include "strom/actors/node_agent.hpp"
#include "strom/actors/scheduler.hpp"
#include "strom/runtime/job_client.hpp"
#include "strom/runtime/node_job.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/training_setup.hpp"

namespace strom::runtime {

namespace {

/// Scheduler threads of each simulated node's actor system (trainers are detached and do not
/// count): each system starts its own pool, and the nodes share this machine's cores.
constexpr std::size_t threads_per_node = 2;

/// Where the in-process scheduler listens: loopback, a free port.
constexpr const char* loopback = "127.0.0.1";

/// Time for every node to hear back from the scheduler after asking to join.
constexpr auto join_wait = std::chrono::seconds(30);

/// The actor systems of the cluster; node 0's also hosts the scheduler.
struct in_process_cluster {
  std::vector<std::unique_ptr<system_config>> configs;
  std::vector<std::unique_ptr<caf::actor_system>> systems;
  caf::actor scheduler;
  std::vector<caf::actor> agents;

  ~in_process_cluster() {
    for (const auto& agent : agents)
      caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
    if (scheduler)
      caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    agents.clear();
    scheduler = nullptr;
    // Remote nodes go first: each system waits for its own actors when destroyed.
    while (!systems.empty())
      systems.pop_back();
  }
};

/// Starts the systems, the scheduler and one agent per node, and waits until all joined.
result<void> start(in_process_cluster& cluster, const cluster_shape& shape) {
  const bool networked = shape.nodes > 1;
  for (std::uint32_t i = 0; i < shape.nodes; ++i) {
    cluster.configs.push_back(
      std::make_unique<system_config>(networked, networked ? threads_per_node : 0));
    cluster.systems.push_back(std::make_unique<caf::actor_system>(*cluster.configs.back()));
  }
  auto& home = *cluster.systems.front();
  cluster.scheduler = home.spawn(actors::scheduler, actors::scheduler_setup{});
  std::uint16_t port = 0;
  if (networked) {
    auto published = home.middleman().publish(cluster.scheduler, 0, loopback);
    if (!published)
      return error{"cannot publish the scheduler on loopback: " + home.render(published.error())};
    port = *published;
  }
  caf::scoped_actor self{home};
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  for (std::uint32_t i = 0; i < shape.nodes; ++i) {
    auto& system = *cluster.systems[i];
    caf::actor scheduler = cluster.scheduler;
    if (i > 0) {
      auto remote = system.middleman().remote_actor(loopback, port);
      if (!remote)
        return error{fmt::format("node {} cannot reach the scheduler at {}:{}: {}", i, loopback,
                                 port, system.render(remote.error()))};
      scheduler = *remote;
    }
    actors::node_agent_setup setup;
    setup.scheduler = scheduler;
    setup.identity.name = fmt::format("node-{}", i);
    setup.identity.address = networked ? loopback : "in-process";
    setup.identity.cores = cores;
    setup.identity.workers = shape.workers;
    setup.prepare = prepare_node_job;
    setup.observer = caf::actor_cast<caf::actor>(self);
    cluster.agents.push_back(system.spawn(actors::node_agent, std::move(setup)));
  }
  std::optional<error> refused;
  std::uint32_t replies = 0;
  self->receive_for(replies, shape.nodes)(
    [&](const actors::join_reply& reply) {
      if (!reply.accepted && !refused)
        refused = error{"a node could not join: " + reply.reason};
    },
    caf::after(join_wait) >> [&] {
      refused = error{fmt::format("only {} of {} nodes joined within {} s", replies, shape.nodes,
                                  join_wait.count())};
      replies = shape.nodes;
    });
  if (refused)
    return *refused;
  return success();
}

} // namespace

result<training_report> train_on_cluster(job_spec& job, const local_training_options& options,
                                         const cluster_shape& shape) {
  const auto run_start = training_clock::now();
  if (shape.nodes == 0 || shape.workers == 0)
    return error{fmt::format("{}: a cluster needs at least one node and one worker per node",
                             job.source())};
  if (auto ok = prepare_run(job, options); !ok)
    return ok.err();
  actors::job_submission submission;
  submission.job_text = to_text(job);
  submission.source = job.source();
  submission.checkpoint_dir = options.checkpoint_dir;
  submission.nodes = shape.nodes;

  in_process_cluster cluster;
  if (auto started = start(cluster, shape); !started)
    return error{fmt::format("{}: {}", job.source(), started.err().message)};
  auto report = run_job(*cluster.systems.front(), cluster.scheduler, submission, options.observer);
  if (!report)
    return error{fmt::format("{}: {}", job.source(), report.err().message)};
  report->wall_seconds = seconds_since(run_start);
  return report;
}

} // namespace strom::runtime
