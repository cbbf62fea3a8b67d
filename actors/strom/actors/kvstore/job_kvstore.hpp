#pragma once
// A kvstore job's part of its job_master (job_kvstore.cpp): the key ranges' shards and their
// replica chains, the server nodes, and the steps that serve, plan, fail over and count them.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "strom/actors/job/job_master_fwd.hpp"
#include "strom/actors/protocol/cluster.hpp"
#include "strom/actors/protocol/kvstore.hpp"

namespace strom::actors {

/// What a kvstore job's job_master keeps of its servers; empty in the other modes.
struct kvstore_run {
  std::vector<kv_shard_entry> shards;  ///< a kvstore job's key ranges (their heads), in order
  /// Every shard of every key range, the replicas of a range in chain order (--replicas).
  std::vector<kv_shard_entry> shard_replicas;
  std::uint64_t chain_version = 0;  ///< of the chain links the servers were sent last
  std::vector<std::string> server_endpoints;  ///< where workers connect to the servers
  std::map<std::uint64_t, std::string> server_endpoint_of;  ///< by server node
  /// Server nodes that joined while no key range lacked a replica: the next loss's fill-ins.
  std::vector<std::uint64_t> spare_servers;
};

} // namespace strom::actors

namespace strom::actors::job_steps {

/// Whether `node_id` is one of the job's server nodes (a member with the server role).
bool is_server(const job_master_state& st, std::uint64_t node_id);

/// A server node joined while the job runs: it takes a replica of each key range whose chain
/// lost one (the end of the chain, filled by its predecessor's state), or, when none lacks
/// one, waits as a spare for the next server loss; false when the job is not a replicated
/// kvstore job in training.
bool take_server(self_ptr self, const job_master_setup& setup, const member_joined& joined);

/// Has every server node spawn its parameter_shards (a kvstore job), then assigns the job to
/// the worker nodes; a job without servers is assigned at once.
void serve_then_assign(self_ptr self, const job_master_setup& setup);

/// Tells every shard the workers of the round just planned (st.work).
void plan_shards_round(self_ptr self);

/// The shards stop waiting for a lost worker node's pushes.
void forget_on_shards(self_ptr self, std::uint64_t node_id);

/// A server node was lost: its key ranges go on on their next replicas (the chains are
/// rebuilt, the workers re-routed); a range with no replica left fails the job.
void lose_server(self_ptr self, const job_master_setup& setup, const member_lost& lost);

/// Adds the shards' counts to the report, then runs `next`.
void count_shards_then(self_ptr self, const job_master_setup& setup, std::function<void()> next);

} // namespace strom::actors::job_steps
