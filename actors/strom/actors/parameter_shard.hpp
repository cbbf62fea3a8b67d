#pragma once
// The parameter_shard: one key range of a parameter-server job (MXNet's KVStore server, one
// actor per range a server node holds; compute/kvstore/key_layout.hpp places the ranges).
// It keeps the range's parameters and, with the optimizer on the server (MXNet's
// update_on_kvstore, the default), the updater and its state for them.
//
// dist_sync: the pushes of one step are summed until every worker of the round pushed that
// step or said it trained fewer steps (kv_done: partitions differ by a batch), a lost worker
// being forgotten; the mean of the pushes then takes one optimizer step, and every pusher of
// the step is answered with the new parameters (one frame, shared). A worker's next push
// comes only after that answer, so the steps of a round merge in order. dist_async: every
// push takes an optimizer step at once and is answered with the parameters it produced.
// Without the server optimizer the shard only sums: the answer is the step's mean gradient
// and each worker runs its own updater on it (dist_sync only: the workers' updaters stay
// equal because they see equal gradients).
//
// A push is applied once: a worker's pushes of a round come with growing step numbers, and
// one not newer than the worker's latest is answered with the current values and counted as
// a duplicate. A push that does not fit the range is refused with an error and counted.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/compute/updaters/learning_rate_schedule.hpp"
#include "strom/compute/updaters/updater.hpp"

namespace strom::actors {

/// How a shard merges pushes (MXNet's kvstore types).
enum class kv_sync : std::uint8_t {
  dist_sync,   ///< one update a step from every worker's push
  dist_async,  ///< one update a push
};

/// What a parameter_shard is built from.
struct parameter_shard_setup {
  compute::key_range range;
  std::vector<float> initial;  ///< the range's initial parameters (range.count floats)
  std::shared_ptr<const compute::updater> rule;  ///< the job's updater
  compute::learning_rate_schedule schedule = compute::learning_rate_schedule::fixed(0.01f);
  kv_sync sync = kv_sync::dist_sync;
  bool server_optimizer = true;  ///< false: only sum (dist_sync)
};

/// The pushes of one dist_sync step so far.
struct pending_step {
  std::vector<float> sum;  ///< of the gradients pushed
  std::set<kv_worker> pushed;
  std::vector<caf::response_promise> answers;
};

/// One round as a dist_sync shard sees it.
struct shard_round {
  bool planned = false;  ///< kv_round arrived: `workers` and `epoch` are known
  std::uint32_t epoch = 0;
  std::vector<kv_worker> workers;
  std::map<kv_worker, std::uint64_t> done;     ///< steps of the workers that finished
  std::map<kv_worker, std::uint64_t> latest;   ///< each worker's latest step pushed
  std::map<std::uint64_t, pending_step> steps;  ///< by step, not yet merged
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
  shard_stats stats;

  static inline const char* name = "strom.parameter_shard";
};

/// Handles: kv_push -> kv_values (see above); kv_round (a round's workers); kv_done;
/// (forget_atom, node_id): stops waiting for the node's workers; stats_atom -> shard_stats;
/// kv_pull_atom -> kv_values: the latest values (the parameters, or without the server
/// optimizer the latest merged gradient; the initial parameters before any push).
/// Ends at once with an error when the setup does not fit (initial values of another length,
/// no updater).
caf::behavior parameter_shard(caf::stateful_actor<parameter_shard_state>* self,
                              parameter_shard_setup setup);

} // namespace strom::actors
