#pragma once
// One worker's handle on a kv_store (kv_store.hpp): MXNet's kv.init / kv.push / kv.pull for
// a host program that brings its own model. Every call returns at once with a std::future;
// the work happens in the store's actors (a per-client agent, actors/kvstore/kv_client_agent.hpp).
// The calls on one key take effect in the order they were made, so in dist_sync a pull made
// after a push sees the step that push took part in, merged with the other workers' pushes.
// A failed call's future throws std::runtime_error from get(), the message naming the rank,
// the key and the sizes (an unknown key, a wrong length, a shard that ended or did not answer
// in time, a store closed meanwhile). A client is for one thread at a time.

#include <cstdint>
#include <future>
#include <memory>
#include <span>

#include <caf/actor.hpp>

namespace strom {

namespace actors {
class kv_call_inbox;
} // namespace actors

namespace runtime {
class kv_key_directory;
} // namespace runtime

class kv_store;

/// A worker rank's push / pull handle; made by kv_store::client.
class kv_client {
public:
  /// Gives `key` its initial values: the first init of a key creates it, a later one (from
  /// any rank) must have the same length and changes nothing, so every rank may init every
  /// key. Ready at once.
  std::future<void> init(std::uint32_t key, std::span<const float> values);

  /// Pushes this rank's gradient of `key` (copied before the call returns). dist_sync: ready
  /// once every worker pushed its same-numbered push of the key and the step was merged.
  std::future<void> push(std::uint32_t key, std::span<const float> gradient);

  /// Fills `out` (the key's length; the caller keeps it alive and untouched until the future
  /// is ready) with the key's values: the parameters, or without a server optimizer the
  /// mean gradient of the latest step (the initial values before any).
  std::future<void> pull(std::uint32_t key, std::span<float> out);

  /// The worker rank this client pushes as.
  std::uint32_t rank() const noexcept { return rank_; }

private:
  friend class kv_store;

  kv_client(std::uint32_t rank, std::shared_ptr<runtime::kv_key_directory> keys,
            std::shared_ptr<actors::kv_call_inbox> inbox, caf::actor agent);

  std::uint32_t rank_;
  std::shared_ptr<runtime::kv_key_directory> keys_;
  std::shared_ptr<actors::kv_call_inbox> inbox_;
  caf::actor agent_;
};

} // namespace strom
