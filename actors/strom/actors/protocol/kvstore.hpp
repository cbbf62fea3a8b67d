#pragma once
// Parameter servers (kvstore mode, parameter_shard.hpp): workers push to and pull from the
// parameter_shards, a node's trainers aggregate locally through its first trainer, the
// job_master places the shards on server nodes' agents and shards replicate along chains.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/clients.hpp"
#include "strom/actors/protocol/frame_inspection.hpp"
#include "strom/compute/frames/frame.hpp"

namespace strom::actors {

/// A worker's name towards the parameter shards: its node and slot (kv_worker_id).
using kv_worker = std::uint64_t;

/// The kv_worker of slot `slot` on node `node`.
constexpr kv_worker kv_worker_id(std::uint64_t node, std::uint32_t slot) noexcept {
  return (node << 16) | (slot & 0xffffu);
}

/// The node of a kv_worker.
constexpr std::uint64_t kv_node_of(kv_worker worker) noexcept { return worker >> 16; }

/// The worker slot of a kv_worker.
constexpr std::uint32_t kv_slot_of(kv_worker worker) noexcept {
  return static_cast<std::uint32_t>(worker & 0xffffu);
}

/// Most worker gradients one push may stand for: the worker slots of a node.
inline constexpr std::uint32_t max_kv_push_weight = 0x10000;

/// worker -> parameter_shard: the worker's gradient of one step over the shard's range, an
/// update frame (dense fp32, 2-bit or threshold) at offset 0 of the range; answered with
/// kv_values once the shard merged the step (dist_sync) or applied the push (dist_async).
/// A node's workers push once, as its first worker: the mean of `weight` gradients (MXNet's
/// local aggregation), which a dist_sync step weighs by `weight`.
struct kv_push {
  kv_worker worker = 0;
  std::uint32_t round = 0;
  std::uint64_t step = 0;  ///< 1-based within the round
  compute::frame gradient;
  /// Gradients averaged in `gradient`, 1..max_kv_push_weight; 0 (dist_sync): a join, with no
  /// gradient, from a node out of batches that takes the step's answer (Horovod's join)
  std::uint32_t weight = 1;
};

template <class F>
typename F::result_type inspect(F& f, kv_push& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_push"), x.worker, x.round, x.step, x.weight,
             x.gradient.size());
  } else {
    if (auto err = f(x.worker, x.round, x.step, x.weight))
      return err;
    // A join (weight 0) carries no gradient.
    return detail::inspect_frame(f, "gradient", x.gradient, compute::max_frame_bytes,
                                 x.weight == 0);
  }
}

/// parameter_shard -> worker: the range's parameters after the step (a dense fp32 frame), or
/// the merged gradient when the shard only sums (serverOptimizer false).
struct kv_values {
  compute::frame values;
};

template <class F>
typename F::result_type inspect(F& f, kv_values& x) {
  return detail::inspect_frame(f, "kv_values", x.values, compute::max_frame_bytes);
}

/// job_master -> parameter_shard: the workers that train round `round` (of data epoch
/// `epoch`): a dist_sync step waits for each of them until it pushed or said kv_done.
struct kv_round {
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;
  std::vector<kv_worker> workers;
};

template <class F>
typename F::result_type inspect(F& f, kv_round& x) {
  return f(caf::meta::type_name("kv_round"), x.round, x.epoch, x.workers);
}

/// worker -> parameter_shard: the worker trained its part of `round` in `steps` steps. Also
/// from a trainer to its node's first trainer, which pushes for the node (kv_local_step).
struct kv_done {
  kv_worker worker = 0;
  std::uint32_t round = 0;
  std::uint64_t steps = 0;
};

template <class F>
typename F::result_type inspect(F& f, kv_done& x) {
  return f(caf::meta::type_name("kv_done"), x.worker, x.round, x.steps);
}

/// trainer -> its node's first trainer, which pushes for the node (local aggregation): slot
/// `slot` added its gradient of step `step` of `round` to the node's sum (kv_node_sum).
struct kv_local_step {
  std::uint32_t round = 0;
  std::uint32_t slot = 0;
  std::uint64_t step = 0;
};

template <class F>
typename F::result_type inspect(F& f, kv_local_step& x) {
  return f(caf::meta::type_name("kv_local_step"), x.round, x.slot, x.step);
}

/// The node's first trainer -> each other trainer of the node: range `range`'s answer to
/// node push `step` of `round` (kv_values), whether the push carried its gradient or not.
struct kv_local_answer {
  std::uint32_t round = 0;
  std::uint64_t step = 0;
  std::uint32_t range = 0;
  compute::frame values;
};

template <class F>
typename F::result_type inspect(F& f, kv_local_answer& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_local_answer"), x.round, x.step, x.range, x.values.size());
  } else {
    if (auto err = f(x.round, x.step, x.range))
      return err;
    return detail::inspect_frame(f, "values", x.values, compute::max_frame_bytes);
  }
}

/// A key range (compute::key_range) and the parameter_shard that holds it, as it travels.
struct kv_shard_entry {
  std::uint32_t key = 0;
  std::uint32_t part = 0;
  std::uint32_t server = 0;  ///< the range's first server (its place in key_layout)
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  caf::actor shard;
  std::uint32_t position = 0;  ///< in the range's chain of replicas: 0 is the head
  std::uint64_t holder = 0;    ///< the server node the shard lives on
};

template <class F>
typename F::result_type inspect(F& f, kv_shard_entry& x) {
  return f(caf::meta::type_name("kv_shard_entry"), x.key, x.part, x.server, x.offset, x.count,
           x.shard, x.position, x.holder);
}

/// job_master -> node_agent of a server node: hold the key ranges of server `server` (of
/// `servers`) of a kvstore job, and with `replicas` > 1 a replica of the ranges of the
/// `replicas` - 1 servers before it; answered with shards_ready.
struct shard_assignment {
  std::uint64_t job_id = 0;
  std::string job_text;
  std::string source;
  std::uint32_t server = 0;
  std::uint32_t servers = 1;
  std::uint32_t replicas = 1;
  /// A server that joins a running job holds exactly these ranges, at the positions named
  /// (the end of their chains); empty: the ranges of `server` as above.
  std::vector<kv_shard_entry> ranges{};
  /// A job that goes on from a checkpoint (--resume): the model whose parameters and updater
  /// state the shards start from; only when the job starts (a joiner takes its chain's).
  job_resume resume{};
};

template <class F>
typename F::result_type inspect(F& f, shard_assignment& x) {
  return f(caf::meta::type_name("shard_assignment"), x.job_id, x.job_text, x.source, x.server,
           x.servers, x.replicas, x.ranges, x.resume);
}

/// node_agent -> job_master: the parameter_shards a server node spawned for a job.
struct shards_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::vector<kv_shard_entry> shards;
  /// HOST:PORT where the workers connect to reach the shards directly (not through the
  /// scheduler); empty where the node publishes no port (a lone in-process node).
  std::string endpoint{};
};

template <class F>
typename F::result_type inspect(F& f, shards_ready& x) {
  return f(caf::meta::type_name("shards_ready"), x.job_id, x.node_id, x.shards, x.endpoint);
}

/// What a parameter_shard counted.
struct shard_stats {
  std::uint64_t updates = 0;     ///< optimizer steps (merged steps in dist_sync, pushes in
                                 ///< dist_async)
  std::uint64_t pushes = 0;      ///< pushes taken
  std::uint64_t duplicates = 0;  ///< pushes seen before, not applied again
  std::uint64_t rejected = 0;    ///< pushes that did not fit the range
  std::uint64_t push_bytes = 0;  ///< frame bytes of the pushes taken
  std::uint64_t pull_bytes = 0;  ///< frame bytes of the answers (one frame a step, shared)
};

template <class F>
typename F::result_type inspect(F& f, shard_stats& x) {
  return f(caf::meta::type_name("shard_stats"), x.updates, x.pushes, x.duplicates, x.rejected,
           x.push_bytes, x.pull_bytes);
}

// -- chain replication of key ranges (--replicas R, parameter_shard.hpp) ---------------------

/// node_agent -> parameter_shard: the shard's successor in its range's chain (null: it is the
/// tail) as of chain configuration `version`; a link older than the shard's is ignored.
struct kv_chain_link {
  std::uint64_t version = 0;
  caf::actor shard;
  caf::actor successor;
};

template <class F>
typename F::result_type inspect(F& f, kv_chain_link& x) {
  return f(caf::meta::type_name("kv_chain_link"), x.version, x.shard, x.successor);
}

/// job_master -> node_agent of a server node: the chain links of its shards for a job, after
/// it connected to `endpoints` (the successors' servers) so chain traffic does not pass
/// through the scheduler; answered with wired_atom.
struct chain_wiring {
  std::uint64_t job_id = 0;
  std::vector<kv_chain_link> links;  ///< none for a pipeline stage's node: it only connects
  std::vector<std::string> endpoints;
};

template <class F>
typename F::result_type inspect(F& f, chain_wiring& x) {
  return f(caf::meta::type_name("chain_wiring"), x.job_id, x.links, x.endpoints);
}

/// parameter_shard -> its successor: one step its range committed (the merged mean of a
/// dist_sync step, or one dist_async push), which the successor commits the same way; answered
/// with `seq` once committed down the rest of the chain.
struct kv_chain_step {
  std::uint64_t version = 0;  ///< the sender's chain configuration
  std::uint64_t seq = 0;      ///< the range's commits so far, this one included
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;
  std::uint64_t step = 0;
  std::vector<kv_worker> workers;  ///< whose push of `step` the commit holds
  compute::frame mean;             ///< the gradient committed, dense fp32
};

template <class F>
typename F::result_type inspect(F& f, kv_chain_step& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_chain_step"), x.version, x.seq, x.round, x.step,
             x.mean.size());
  } else {
    if (auto err = f(x.version, x.seq, x.round, x.epoch, x.step, x.workers))
      return err;
    return detail::inspect_frame(f, "mean", x.mean, compute::max_frame_bytes);
  }
}

/// A dist_sync round's plan and progress as a shard holds it (its pending pushes aside).
struct kv_round_record {
  std::uint32_t round = 0;
  bool planned = false;  ///< kv_round arrived: `workers` and `epoch` are known
  std::uint32_t epoch = 0;
  std::vector<kv_worker> workers;
  std::map<kv_worker, std::uint64_t> done;    ///< steps of the workers that finished
  std::map<kv_worker, std::uint64_t> latest;  ///< each worker's latest step committed
};

template <class F>
typename F::result_type inspect(F& f, kv_round_record& x) {
  return f(caf::meta::type_name("kv_round_record"), x.round, x.planned, x.epoch, x.workers,
           x.done, x.latest);
}

/// parameter_shard -> a new successor: everything the shard committed, which the successor
/// takes in place of its own (round plans merged with what it holds); answered with `seq`.
struct kv_shard_state {
  std::uint64_t version = 0;
  std::uint64_t seq = 0;
  std::uint64_t iteration = 0;
  std::uint32_t epoch = 0;
  std::vector<kv_round_record> rounds;
  std::vector<std::uint32_t> closed;
  std::vector<std::uint64_t> lost_nodes;
  compute::frame parameters;        ///< dense fp32
  compute::frame updater_state;     ///< dense fp32
  compute::frame latest;            ///< the latest answer
};

template <class F>
typename F::result_type inspect(F& f, kv_shard_state& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_shard_state"), x.version, x.seq, x.iteration,
             x.parameters.size());
  } else {
    if (auto err = f(x.version, x.seq, x.iteration, x.epoch, x.rounds, x.closed, x.lost_nodes))
      return err;
    if (auto err = detail::inspect_frame(f, "parameters", x.parameters, compute::max_frame_bytes))
      return err;
    if (auto err = detail::inspect_frame(f, "updater_state", x.updater_state,
                                         compute::max_frame_bytes))
      return err;
    return detail::inspect_frame(f, "latest", x.latest, compute::max_frame_bytes);
  }
}

/// job_master -> node_agent -> trainers: key ranges whose head changed (its server was lost);
/// later pushes, an unanswered one and a finished round's kv_done go to the new head. The
/// node connects to the new heads' server nodes at `endpoints` that it does not reach yet (a
/// server that joined after the job started), so pushes skip the hop through the scheduler.
struct kv_reroute {
  std::uint64_t job_id = 0;
  std::vector<kv_shard_entry> heads;
  std::vector<std::string> endpoints{};
};

template <class F>
typename F::result_type inspect(F& f, kv_reroute& x) {
  return f(caf::meta::type_name("kv_reroute"), x.job_id, x.heads, x.endpoints);
}

} // namespace strom::actors
