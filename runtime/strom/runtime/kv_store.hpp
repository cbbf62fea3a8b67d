#pragma once
// The embedding API's KV store: MXNet's KVStore (dist_sync, dist_async, the optimizer on the
// server) for a host program that brings its own model and only wants strom's parameter
// servers. The store runs S servers' worth of parameter_shards (actors/kvstore/parameter_shard.hpp,
// the same actor kvstore jobs use) in the host's actor system, and hands each of its W worker
// ranks a kv_client (kv_client.hpp), typically one per host thread:
//
//   strom::kv_store_options options;
//   options.servers = 2;
//   options.workers = 2;
//   options.updater = "(learningRate = 0.001, adam = ())";  // like a job's training.updater
//   strom::kv_store store{system, options};
//   auto kv = store.client(rank);                           // in each worker thread
//   kv.init(0, weights).get();
//   kv.push(0, gradient);                                   // returns at once
//   kv.pull(0, weights).get();                              // the merged step's parameters
//
// Keys are placed as a job's are (a key of bigArrayBound values or more is split evenly over
// the servers). dist_sync: the k-th pushes of a key from all W ranks make one step, the
// optimizer stepping on their mean; dist_async: every push is one step. Without the server
// optimizer (dist_sync only) the shards only average and a pull gives the mean gradient.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "strom/actors/kvstore/kv_modes.hpp"
#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/runtime/kv_client.hpp"

namespace strom {

namespace runtime {
class kv_key_directory;
} // namespace runtime

namespace actors {
class kv_call_inbox;
} // namespace actors

/// How a kv_store is set up; the constructor checks every field.
struct kv_store_options {
  std::uint32_t servers = 1;  ///< a key of big_array_bound values or more is split over them
  std::uint32_t workers = 1;  ///< ranks 0..workers-1; a dist_sync step waits for each
  actors::kv_sync sync = actors::kv_sync::dist_sync;
  /// The server's optimizer, in a job file's training.updater syntax (Cap'n Proto text of
  /// schema/job.capnp's Updater); schedules count optimizer steps (unit = iteration).
  std::string updater = "(learningRate = 0.01, sgd = void)";
  bool server_optimizer = true;  ///< false: the shards only average (dist_sync only)
  std::size_t big_array_bound = compute::default_big_array_bound;
  actors::kv_compression compression = actors::kv_compression::none;  ///< of the pushes
  float two_bit_threshold = 0.5f;  ///< MXNet's 2-bit threshold, on the pushed values as they are
  /// A push or pull unanswered this long fails; a dist_sync push waits for the slowest rank.
  std::chrono::milliseconds timeout{30'000};
};

/// Workers or servers a kv_store may have: each server is an actor per key, each worker a
/// client agent and, in dist_sync, a push every step waits for.
inline constexpr std::uint32_t max_kv_store_members = 1024;

/// A KV store of parameter_shards in an actor system, and its clients' agents. Destroying it
/// stops them (bounded wait); calls still outstanding then fail, and later calls of its
/// clients fail at once.
class kv_store {
public:
  /// Spawns nothing until keys are initialised. `system` must outlive the store and have
  /// strom's message types (strom::runtime::configure_for_strom, or an embedded_runtime's
  /// system). Throws std::invalid_argument naming the option and its value.
  kv_store(caf::actor_system& system, kv_store_options options);

  /// Stops the shards and the client agents and waits (bounded) until they have quit.
  ~kv_store();

  kv_store(const kv_store&) = delete;
  kv_store& operator=(const kv_store&) = delete;

  /// The client of worker `rank`, once per rank; throws std::invalid_argument for a rank
  /// out of range or taken.
  kv_client client(std::uint32_t rank);

  /// The parameter_shards of `key`, one per range (none when it is unknown): for stats_atom.
  std::vector<caf::actor> shards(std::uint32_t key) const;

  /// The options the store was made with.
  const kv_store_options& options() const noexcept { return options_; }

private:
  caf::actor_system& system_;
  kv_store_options options_;
  std::shared_ptr<runtime::kv_key_directory> keys_;
  std::mutex agents_mutex_;
  std::vector<caf::actor> agents_;  ///< by rank; null where no client was made
  std::vector<std::shared_ptr<actors::kv_call_inbox>> inboxes_;  ///< by rank, likewise
};

} // namespace strom
