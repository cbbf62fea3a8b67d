#pragma once
// The node agent's steps shared by the files that make it up: node_agent.cpp (joining, jobs,
// rounds, evaluation, restores), node_serving.cpp (a kvstore job's shards, a pipeline job's
// stages, connections to servers) and sharing/node_wiring.cpp (a mesh job's relay edges, one
// topology update at a time). Internal to those files.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <fmt/format.h>

#include "strom/actors/errors.hpp"
#include "strom/actors/cluster/node_agent.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors::agent_steps {

using self_ptr = caf::stateful_actor<node_agent_state>*;

// -- node_agent.cpp ---------------------------------------------------------------------------

/// Runs `work` on a thread of its own (a detached blocking actor), so that the agent keeps
/// answering heartbeats; `work` tells the agent when it is done.
void run_aside(self_ptr self, std::function<void(caf::blocking_actor*, const caf::actor&)> work);

/// Ends one of the job's actors; demonitored first, as its end is no failure.
void end_actor(self_ptr self, const caf::actor& member);

/// Calls `fn`, turning an escaped exception into an error.
template <class T, class Fn>
result<T> guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return error{e.what()};
  }
}

/// What work aside for job `job_id` left in `slot`, with the `pending` promise it answers,
/// both taken; nothing when none waits, or when the job was stopped or the work failed (the
/// promise is answered with why then).
template <class T>
std::optional<std::pair<caf::response_promise, T>>
take_aside_outcome(self_ptr self, std::optional<caf::response_promise>& pending,
                   std::shared_ptr<std::optional<result<T>>>& slot, std::uint64_t job_id) {
  auto& st = self->state;
  if (!pending || !slot || !slot->has_value())
    return std::nullopt;
  auto promise = std::move(*pending);
  pending.reset();
  auto outcome = std::move(**slot);
  slot.reset();
  if (!st.run || st.run->job_id != job_id) {
    promise.deliver(make_error(strom_error::job_cancelled,
                               fmt::format("job {} was stopped", job_id)));
    return std::nullopt;
  }
  if (!outcome) {
    promise.deliver(make_error(strom_error::node_failed, outcome.err().message));
    return std::nullopt;
  }
  return std::make_pair(std::move(promise), std::move(*outcome));
}

// -- node_serving.cpp -------------------------------------------------------------------------

/// Connects to each server at `endpoints` (blocking: called aside). A server that cannot be
/// reached directly is still reached through the scheduler, only slower.
std::vector<std::shared_ptr<void>> connect_servers(std::uint64_t node,
                                                   const std::vector<std::string>& endpoints,
                                                   const relay_connector& connect);

/// A server node spawns the shards of its key ranges for a kvstore job.
caf::result<shards_ready> serve(self_ptr self, const node_agent_setup& setup,
                                const shard_assignment& work);

/// Connects to the servers of `wiring`'s successors aside (blocking connects never hold up
/// the agent's heartbeats); the shards get their links once the connections are open. A
/// pipeline stage's node connects to its neighbouring stages' nodes the same way, with no
/// links to hand on: a direct connection is all their frames need.
void wire_chains(self_ptr self, const node_agent_setup& setup, const chain_wiring& wiring);

/// The connections of chain version `version` are open: its links go to the shards.
void chains_wired(self_ptr self, std::uint64_t job_id, std::uint64_t version);

/// After a failover, connects aside to the new heads' server nodes it does not reach yet (a
/// server that joined during the job); until then their messages pass through the scheduler.
void reach_new_heads(self_ptr self, const node_agent_setup& setup, const kv_reroute& reroute);

/// A worker node spawns its stage of a pipeline job.
caf::result<stage_ready> run_stage(self_ptr self, const node_agent_setup& setup,
                                   const stage_assignment& work);

/// A re-partitioned pipeline's old subnets here end; only those of the job it serves, and
/// only its own subnets (a stranger's list ends nothing else).
void retire_stages(self_ptr self, const stage_retire& retire);

/// Whether `source` is one of the actors (shards, subnet) this node serves a job with.
bool is_served_shard(const node_agent_state& st, const caf::actor_addr& source);

// -- sharing/node_wiring.cpp ------------------------------------------------------------------

/// A topology_update arrived. A job_master that remaps twice quickly (two losses in a row, a
/// loss during a join) sends the next one while the node still wires the last: only the
/// newest waits to be wired next, and every request is answered.
void take_update(self_ptr self, const node_agent_setup& setup, const topology_update& update);

/// The helper of a wiring is done: the parent's relay becomes ours' peer and the job_master
/// hears that this edge is wired (or why not); then the next update, if one came meanwhile.
void wired(self_ptr self, const node_agent_setup& setup, std::uint64_t job_id);

} // namespace strom::actors::agent_steps
