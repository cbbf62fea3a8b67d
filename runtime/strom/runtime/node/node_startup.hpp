#pragma once
// How strom starts nodes and jobs inside this process: a node agent that joins a scheduler
// and prepares its jobs from their text, a bounded wait until the scheduler has answered,
// and the submission a job spec becomes. In-process clusters and the embedding API start
// their nodes and jobs the same way.

#include <cstdint>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/cluster/node_agent.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/observability/observation.hpp"

namespace strom::runtime {

/// What a node announces when it joins.
/// What a live simulation (runtime/sim/live/live_run.hpp) puts in place of a node's machine and
/// network; all empty: the real ones.
struct simulated_node {
  /// Told what the node's trainers compute (actors/sim_seams.hpp).
  std::shared_ptr<actors::compute_meter> meter{};
  /// How its relay reaches the hub (actors/sim_seams.hpp).
  actors::relay_reach reach_relay{};
  /// How it publishes its relay for mesh neighbours and connects to theirs.
  actors::relay_publisher publish_relay{};
  actors::relay_connector connect_relay{};
};

struct node_identity {
  std::string name;     ///< unique among the scheduler's nodes
  std::string address;  ///< shown in status and errors
  std::uint32_t workers = 1;  ///< trainers the node runs
  /// What the scheduler of an in-process cluster asks for (scheduler_setup); empty elsewhere.
  std::string admission_token;
  /// Where the node publishes its jobs' relays for mesh neighbours (its advertised address);
  /// empty: nowhere (a lone in-process node without a network).
  std::string relay_host{};
  std::string role = actors::node_role_worker;  ///< a server node holds parameter shards
  /// How its relay ports and links to neighbours' relays are secured; null: plaintext.
  std::shared_ptr<const tls_context> tls{};
  /// Its speed factor over the epochs (--speed-factor, --speed-drift; a testing aid,
  /// actors/worker/compute_slowdown.hpp).
  actors::node_speed speed{};
  /// Bytes strom may place on it (--memory-limit); 0: no limit set.
  std::uint64_t memory_limit = 0;
  /// Where its workers step, whatever the job says (--device); unset: the job's device.
  std::optional<schema::Device> device{};
  /// What it measured before joining (measure_node_compute_rate); 0: not measured.
  double compute_rate = 0.0;
  /// Set in a live simulation: what stands in for the machine and the network.
  simulated_node simulation{};
  /// Set in an in-process cluster, whose command reports a job's failure
  /// (node_agent_setup::failures_reported).
  bool failures_reported = false;
};

/// Spawns a node agent in `system` that joins `scheduler` as `identity`, prepares its jobs
/// with prepare_node_job, sends the scheduler's join_reply to `observer` and keeps to
/// `timeouts` (giving up on a scheduler silent for their reconnect_timeout); `watch` are the
/// process's metrics and timeline hooks.
caf::actor spawn_node(caf::actor_system& system, const caf::actor& scheduler,
                      const node_identity& identity, const caf::actor& observer,
                      const actors::timing& timeouts = {}, const observers& watch = {});

/// The node's compute rate for the speed-aware partition: compute::measure_compute_rate on
/// this machine's steady clock, times `speed_factor` (a slowed node waits after each
/// computation, so it would measure that much less).
double measure_node_compute_rate(double speed_factor);

/// A fresh random admission token (std::random_device) for a scheduler that admits only the
/// nodes it hands it to.
std::string make_admission_token();

/// Receives `count` join replies on `self`, waiting at most `limit` for each; the error says
/// why a node was refused, or how many joined in time.
result<void> await_joins(caf::scoped_actor& self, std::uint32_t count, caf::timespan limit);

/// Applies the overrides in `options` to `job` (prepare_run) and returns the submission for
/// `nodes` worker nodes (0: every one that has joined) and, in kvstore mode, `servers`
/// server nodes (0: every one that has joined).
result<actors::job_submission> make_submission(job_spec& job,
                                               const local_training_options& options,
                                               std::uint32_t nodes, std::uint32_t servers = 0);

} // namespace strom::runtime
