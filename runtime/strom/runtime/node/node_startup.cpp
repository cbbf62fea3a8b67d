#include "strom/runtime/node/node_startup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <thread>

#include "strom/actors/cluster/node_agent.hpp"
#include "strom/compute/partition/speed_probe.hpp"
#include "strom/runtime/node/node_job.hpp"
#include "strom/runtime/node/kvstore_setup.hpp"
#include "strom/runtime/node/pipeline_setup.hpp"
#include "strom/runtime/node/relay_links.hpp"
#include "strom/runtime/node/training_setup.hpp"
#include "strom/runtime/job/checkpoint_resume.hpp"

namespace strom::runtime {

namespace {

/// 32-bit words of an admission token: 128 random bits, beyond guessing on a loopback port.
constexpr std::size_t admission_token_words = 4;

} // namespace

caf::actor spawn_node(caf::actor_system& system, const caf::actor& scheduler,
                      const node_identity& identity, const caf::actor& observer,
                      const actors::timing& timeouts, const observers& watch) {
  actors::node_agent_setup setup;
  setup.scheduler = caf::actor_cast<actors::agent_scheduler_actor>(scheduler);
  setup.identity.name = identity.name;
  setup.identity.address = identity.address;
  setup.identity.cores = std::max(1u, std::thread::hardware_concurrency());
  setup.identity.workers = identity.workers;
  setup.identity.admission_token = identity.admission_token;
  setup.identity.role = identity.role;
  setup.identity.memory_limit = identity.memory_limit;
  setup.identity.speed_factor = identity.speed.factor;
  setup.identity.compute_rate = identity.compute_rate;
  setup.speed = identity.speed;
  if (identity.role == actors::node_role_server)
    setup.serve = prepare_shards;
  setup.timeouts = timeouts;
  setup.metrics = watch.metrics;
  setup.timeline = watch.timeline;
  setup.prepare = [device = identity.device](const actors::job_assignment& assignment,
                                              const actors::replicas_built& built) {
    return prepare_node_job(assignment, device, built);
  };
  if (identity.role == actors::node_role_worker)
    setup.stage = prepare_stage;
  if (!identity.relay_host.empty()) {
    setup.publish_relay = relay_publisher_on(system, identity.relay_host, identity.tls);
    setup.connect_relay = relay_connector_of(system, identity.tls);
  }
  setup.observer = observer;
  setup.failures_reported = identity.failures_reported;
  setup.meter = identity.simulation.meter;
  setup.reach_relay = identity.simulation.reach_relay;
  if (identity.simulation.publish_relay) {
    setup.publish_relay = identity.simulation.publish_relay;
    setup.connect_relay = identity.simulation.connect_relay;
  }
  return system.spawn(actors::node_agent, std::move(setup));
}

double measure_node_compute_rate(double speed_factor) {
  const auto start = std::chrono::steady_clock::now();
  const double rate = compute::measure_compute_rate([start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  return rate * speed_factor;
}

std::string make_admission_token() {
  std::random_device entropy;
  std::string token;
  for (std::size_t i = 0; i < admission_token_words; ++i)
    token += fmt::format("{:08x}", static_cast<std::uint32_t>(entropy()));
  return token;
}

result<void> await_joins(caf::scoped_actor& self, std::uint32_t count, caf::timespan limit) {
  std::optional<error> refused;
  std::uint32_t replies = 0;
  self->receive_for(replies, count)(
    [&](const actors::join_reply& reply) {
      if (!reply.accepted && !refused)
        refused = error{"a node could not join: " + reply.reason};
    },
    caf::after(limit) >> [&] {
      refused = error{fmt::format("only {} of {} nodes joined within {:g} s", replies, count,
                                  std::chrono::duration<double>(limit).count())};
      replies = count;
    });
  if (refused)
    return *refused;
  return success();
}

result<actors::job_submission> make_submission(job_spec& job,
                                               const local_training_options& options,
                                               std::uint32_t nodes, std::uint32_t servers) {
  if (auto ok = prepare_run(job, options); !ok)
    return ok.err();
  actors::job_submission submission;
  submission.job_text = to_text(job);
  submission.source = job.source();
  // Checked before a run folder is made for it.
  if (options.resume) {
    auto resume = job_resume_of(job, *options.resume);
    if (!resume)
      return resume.err();
    submission.resume = std::move(*resume);
  }
  if (!options.checkpoint_dir.empty()) {
    auto run_folder = new_run_folder(options.checkpoint_dir, job.reader().getName().cStr());
    if (!run_folder)
      return run_folder.err();
    submission.checkpoint_dir = std::move(*run_folder);
  }
  submission.keep_checkpoints = options.keep_checkpoints;
  submission.nodes = nodes;
  const auto topology = topology_of(job);
  submission.topology = actors::to_string(topology.kind);
  submission.fanout = topology.fanout;
  submission.kvstore = job.reader().getDistributed().getMode() == schema::TrainingMode::KVSTORE;
  submission.servers = servers;
  submission.replicas = job.reader().getDistributed().getReplicas();
  submission.pipeline =
    job.reader().getDistributed().getMode() == schema::TrainingMode::PIPELINE;
  submission.averaging =
    job.reader().getDistributed().getMode() == schema::TrainingMode::AVERAGING;
  return submission;
}

} // namespace strom::runtime
