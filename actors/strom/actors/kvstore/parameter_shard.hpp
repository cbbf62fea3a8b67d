#pragma once
// The parameter_shard: one key range of a parameter-server job (MXNet's KVStore server, one
// actor per range a server node holds; compute/kvstore/key_layout.hpp places the ranges).
// It keeps the range's parameters and, with the optimizer on the server (MXNet's
// update_on_kvstore, the default), the updater and its state for them.
//
// dist_sync: the pushes of one step are summed until every worker of the round pushed that step or
// said it trained fewer steps (kv_done: a cut round), a lost worker being forgotten; a worker out
// of batches joins the step with a push of weight 0 and no gradient, which counts as its push and
// adds nothing (Horovod's join: it takes the step's answer). The mean of the pushes (each weighed
// by the workers' gradients it stands for: a node's pushes carry its workers' mean) then takes one
// optimizer step, and every pusher of the step is answered with the new parameters (one frame,
// shared). A worker's next push comes only after that answer, so the steps of a round merge in
// order. dist_async: every push takes an optimizer step at once and is answered with the
// parameters it produced.
// Without the server optimizer the shard only sums: the answer is the step's mean gradient
// and each worker runs its own updater on it (dist_sync only: the workers' updaters stay
// equal because they see equal gradients).
//
// A push is applied once: a worker's pushes of a round come with growing step numbers, and
// one not newer than the worker's latest is answered with the current values and counted as
// a duplicate. A push that does not fit the range is refused with an error and counted.
//
// Chain replication (--replicas R; the parameter-server paper's and LightDNN's design): a
// range lives on R shards in a chain. Workers push to the head; each commit (a merged step,
// an async push) goes down the chain as the gradient committed (kv_chain_step), which every
// successor commits with the same kernel, so the replicas stay equal to the bit. The head
// answers the pushers only once the tail has the commit: an answered step survives the loss
// of any R-1 shards. kv_done goes down the chain behind the commits; round plans and lost
// nodes come to every replica from the job_master. When the chain changes (a shard lost, a
// shard added) a shard given a new successor sends it everything it committed
// (kv_shard_state), then releases what it held for the old one. A replica that becomes head
// takes the re-sent pushes of the lost head's step: its `latest` per worker holds only
// commits, so a push the chain committed is a duplicate and one it lost is merged anew.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_modes.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/compute/updaters/learning_rate_schedule.hpp"
#include "strom/compute/updaters/updater.hpp"

namespace strom::actors {

/// What a parameter_shard is built from.
struct parameter_shard_setup {
  compute::key_range range;
  std::vector<float> initial;  ///< the range's initial parameters (range.count floats)
  /// The range's initial updater state (a resumed job's, the updater's state_size floats);
  /// empty: the updater's own initial state.
  std::vector<float> initial_state;
  std::uint64_t iteration = 0;  ///< optimizer steps taken before (a resumed job's)
  std::shared_ptr<const compute::updater> rule;  ///< the job's updater
  compute::learning_rate_schedule schedule = compute::learning_rate_schedule::fixed(0.01f);
  kv_sync sync = kv_sync::dist_sync;
  bool server_optimizer = true;  ///< false: only sum (dist_sync)
  std::uint32_t position = 0;    ///< in the range's chain of replicas (0: the head)
  bool fp16_answers = false;     ///< answers in fp16 (distributed.pullPrecision)
  /// A chain step or state unacknowledged this long is logged; the answers it holds wait for
  /// the job_master's new chain link (a successor lost is always replaced or dropped).
  caf::timespan chain_timeout = timing{}.answer_timeout;
};

/// The pushes of one dist_sync step so far.
struct pending_step {
  std::vector<float> sum;  ///< of the gradients pushed, each times its weight
  std::set<kv_worker> pushed;
  std::uint64_t weight = 0;  ///< of the pushes: the workers' gradients they stand for
  std::vector<caf::response_promise> answers;
};

/// One round as a dist_sync shard sees it: its record (`latest` counts pushes taken on the
/// head, commits on a replica) and the steps not yet merged.
struct shard_round : kv_round_record {
  std::map<kv_worker, std::uint64_t> taken;     ///< each worker's latest step pushed here
  std::map<std::uint64_t, pending_step> steps;  ///< by step, not yet merged
};

/// Answers a commit holds back until the successor acknowledged it (chain replication).
struct held_commit {
  compute::frame values;                       ///< what the pushers get
  std::vector<caf::response_promise> answers;  ///< the pushers'
  std::vector<caf::response_promise> acks;     ///< the predecessor's, for this commit
};

/// A parameter_shard's state.
struct parameter_shard_state {
  std::vector<float> parameters;
  std::vector<float> updater_state;
  std::vector<float> scratch;  ///< the update being computed
  /// The sum buffer of the step merged last, reused by the next: one model-sized buffer a
  /// step would otherwise be allocated (and page-faulted) anew.
  std::vector<float> spare;
  compute::frame_workspace workspace;
  std::uint64_t iteration = 0;  ///< optimizer steps taken (the updater's step count)
  std::uint32_t epoch = 0;      ///< data epoch of the latest round planned
  std::map<std::uint32_t, shard_round> rounds;  ///< dist_sync: rounds not yet over
  std::set<std::uint32_t> closed;  ///< dist_sync: rounds over (a push to one is a duplicate)
  std::set<std::uint64_t> lost_nodes;           ///< their workers are no longer waited for
  compute::frame latest;  ///< the latest answer (duplicates get it)
  std::optional<compute::fp16_encoder> fp16;  ///< encodes the answers with fp16_answers
  shard_stats stats;
  // -- chain replication ---
  std::uint64_t seq = 0;            ///< commits so far (a chain step's number)
  caf::actor successor;             ///< null: the tail (or no chain)
  std::uint64_t chain_version = 0;  ///< of the latest link taken
  std::uint64_t generation = 0;     ///< successors so far: older acknowledgements are stale
  std::map<std::uint64_t, held_commit> held;  ///< by seq, until the successor acknowledged

  static inline const char* name = "strom.parameter_shard";
};

/// Handles: kv_push -> kv_values (see above); kv_round (a round's workers); kv_done;
/// (forget_atom, node_id): stops waiting for the node's workers; stats_atom -> shard_stats;
/// kv_chain_link (its successor); kv_chain_step -> seq and kv_shard_state -> seq (from its
/// predecessor); kv_pull_atom -> kv_values: the latest values committed (the parameters, or
/// without the server optimizer the latest merged gradient; the initial parameters before any
/// push); kv_state_atom -> kv_shard_state: everything it committed, the updater state
/// included (what a checkpoint of a kvstore job holds).
/// Ends at once with an error when the setup does not fit (initial values or state of another
/// length, no updater).
caf::behavior parameter_shard(caf::stateful_actor<parameter_shard_state>* self,
                              parameter_shard_setup setup);

} // namespace strom::actors
