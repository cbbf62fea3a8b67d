#pragma once
// The keys of one kv_store (kv_store.hpp) and the parameter_shards that hold them, shared by
// the store and its clients' host threads behind a lock. The first init of a key places it
// over the store's servers as a job's keys are placed (compute::place_keys: a key of
// bigArrayBound values or more is split evenly over every server) and spawns one
// parameter_shard per range, seeded with the init's values; a later init of the key only
// checks its size, so every rank may init every key (MXNet's usage) and the first one's
// values count.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/kvstore/parameter_shard.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

/// What the shards of every key of a store share.
struct kv_shard_template {
  std::uint32_t servers = 1;
  std::vector<actors::kv_worker> workers;  ///< a dist_sync step waits for a push of each
  std::size_t big_array_bound = compute::default_big_array_bound;
  std::shared_ptr<const compute::updater> rule;
  compute::learning_rate_schedule schedule = compute::learning_rate_schedule::fixed(0.01f);
  actors::kv_sync sync = actors::kv_sync::dist_sync;
  bool server_optimizer = true;
};

/// A store's keys; errors say what is wrong with the key (the caller names it).
class kv_key_directory {
public:
  kv_key_directory(caf::actor_system& system, kv_shard_template shards);

  /// The shards of `key`, spawned with `values` at its first init; refused when the key
  /// holds another number of values, when `values` is empty, or once closed.
  result<std::vector<actors::kv_shard_ref>> init(std::uint32_t key, std::span<const float> values);

  /// The shards of `key`, which must hold `values` values.
  result<std::vector<actors::kv_shard_ref>> find(std::uint32_t key, std::size_t values) const;

  /// The parameter_shards of `key` (none when it is unknown).
  std::vector<caf::actor> shards_of(std::uint32_t key) const;

  /// Refuses every later init and find and returns every shard spawned, for stopping them.
  std::vector<caf::actor> close();

private:
  struct key_entry {
    std::size_t values = 0;
    std::vector<actors::kv_shard_ref> shards;
  };

  caf::actor_system& system_;
  kv_shard_template template_;
  mutable std::mutex mutex_;
  std::map<std::uint32_t, key_entry> keys_;
  bool closed_ = false;
};

} // namespace strom::runtime
