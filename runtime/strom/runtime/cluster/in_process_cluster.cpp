#include "strom/runtime/cluster/in_process_cluster.hpp"

#include <fmt/format.h>

#include <optional>

#include "strom/actors/cluster/in_process_address.hpp"
#include "strom/actors/cluster/scheduler.hpp"
#include "strom/log.hpp"
#include "strom/runtime/node/node_daemon.hpp"
#include "strom/runtime/node/node_startup.hpp"
#include "strom/runtime/node/pipeline_setup.hpp"

namespace strom::runtime {

namespace {

/// Where the in-process scheduler listens: loopback, a free port.
constexpr const char* loopback = "127.0.0.1";

/// Time for every node to hear back from the scheduler after asking to join.
constexpr auto join_wait = std::chrono::seconds(30);

} // namespace

result<std::unique_ptr<in_process_cluster>>
in_process_cluster::start(const cluster_shape& shape, const observers& watch,
                          const actors::timing& timeouts) {
  const bool networked = shape.nodes + shape.servers > 1;
  std::unique_ptr<in_process_cluster> cluster{new in_process_cluster(networked, watch)};
  cluster->node_speeds_ = shape.node_speeds;
  cluster->memory_limit_ = shape.memory_limit;
  // The first system hosts the scheduler; the nodes' agents start below.
  cluster->configs_.push_back(std::make_unique<system_config>(networked));
  cluster->systems_.push_back(std::make_unique<caf::actor_system>(*cluster->configs_.back()));
  auto& home = cluster->home();
  // The loopback port is open to every process on the machine: only nodes that bring the
  // token, which this process alone knows, may join.
  actors::scheduler_setup setup;
  setup.admission_token = cluster->admission_token_ = make_admission_token();
  setup.metrics = watch.metrics;
  setup.timeouts = timeouts;
  setup.place = place_job;
  setup.failures_reported = true;  // the command that runs the cluster reports them
  cluster->scheduler_ = home.spawn(actors::scheduler, setup);
  if (networked) {
    auto port = guarded_port::open(home, cluster->scheduler_, {loopback, 0});
    if (!port)
      return error{"cannot publish the scheduler: " + port.err().message};
    cluster->port_ = std::move(*port);
  }
  for (std::uint32_t i = 0; i < shape.nodes; ++i)
    if (auto added = cluster->add_node(shape.workers); !added)
      return added.err();
  for (std::uint32_t i = 0; i < shape.servers; ++i)
    if (auto added = cluster->add_node(1, actors::node_role_server); !added)
      return added.err();
  if (networked)
    log::info("in-process cluster: {} nodes and {} servers joined the scheduler on {}:{}",
              shape.nodes, shape.servers, loopback, cluster->port_->port());
  return cluster;
}

result<std::size_t> in_process_cluster::add_node(std::uint32_t workers, const std::string& role) {
  const auto index = agents_.size();
  if (index > 0) {
    configs_.push_back(std::make_unique<system_config>(networked_));
    systems_.push_back(std::make_unique<caf::actor_system>(*configs_.back()));
  }
  auto& system = *systems_.back();
  caf::actor scheduler = scheduler_;
  if (index > 0) {
    auto link = connect_to_scheduler(system, {loopback, port_->port()});
    if (!link)
      return error{fmt::format("node {}: {}", index, link.err().message)};
    scheduler = link->remote;
    links_.push_back(std::move(*link));
  }
  node_identity identity{
    fmt::format("{}-{}", role == actors::node_role_server ? "server" : "node", index),
    networked_ ? loopback : actors::in_process_address,
    workers,
    admission_token_,
    networked_ ? loopback : "",
    role};
  if (index < node_speeds_.size() && role == actors::node_role_worker)
    identity.speed = node_speeds_[index];
  if (role == actors::node_role_worker)  // one node at a time: the probes do not overlap
    identity.compute_rate = measure_node_compute_rate(identity.speed.factor);
  identity.memory_limit = memory_limit_;
  identity.failures_reported = true;
  caf::scoped_actor self{home()};
  agents_.push_back(
    spawn_node(system, scheduler, identity, caf::actor_cast<caf::actor>(self), {}, watch_));
  std::optional<error> refused;
  self->receive(
    [&](const actors::join_reply& reply) {
      if (!reply.accepted)
        refused = error{"a node could not join: " + reply.reason};
      node_ids_.push_back(reply.node_id);
    },
    caf::after(join_wait) >> [&] {
      refused = error{fmt::format("node {} did not join within {} s", index, join_wait.count())};
    });
  if (refused)
    return *refused;
  return index;
}

void in_process_cluster::lose(std::size_t index) {
  // What the node's peers see when its process dies; unlike exit_reason::kill it lets the
  // agent end its job's actors, which its actor system waits for when destroyed.
  caf::anon_send_exit(agents_.at(index), caf::exit_reason::remote_link_unreachable);
}

in_process_cluster::~in_process_cluster() {
  for (const auto& agent : agents_)
    caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
  if (scheduler_)
    caf::anon_send_exit(scheduler_, caf::exit_reason::user_shutdown);
  agents_.clear();
  scheduler_ = nullptr;
  // Remote nodes go first: each system waits for its own actors when destroyed. The
  // scheduler's port closes before the system it hands peers to.
  while (systems_.size() > 1)
    systems_.pop_back();
  links_.clear();
  port_.reset();
  systems_.clear();
}

} // namespace strom::runtime
