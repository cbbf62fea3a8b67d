#pragma once
// The actor behind one strom::kv_client (runtime/kv_client.hpp). A host thread cannot take
// an actor's answers without blocking, so it queues each call (a push or a pull, with the
// std::promise its future waits on) in the agent's inbox and wakes the agent; the agent
// talks to the parameter_shards and keeps the promise.
//
// The calls of one key run one after another in the order they were made, so a pull made
// after a push sees that push's step merged (MXNet orders the operations on a key the same
// way); calls on different keys overlap. Pushes are encoded here (kv_pusher: the store's
// compression, a residual per key range), pulls are decoded straight into the host's buffer.
// Every call's promise is kept exactly once: with an error naming the rank, the key, the part
// and what went wrong when a shard refuses, ends or does not answer in time, and with
// "closed" when the agent ends first.

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/messages.hpp"

namespace strom::actors {

/// One push or pull a host made.
struct kv_call {
  enum class kind : std::uint8_t { push, pull };
  kind what = kind::pull;
  std::uint32_t key = 0;
  std::vector<kv_shard_ref> shards;  ///< the key's ranges (offsets within the key)
  std::vector<float> gradient;       ///< push: a copy of the host's gradient
  std::span<float> out;              ///< pull: the host's buffer, whole before `done` is kept
  std::promise<void> done;
};

/// "push" or "pull".
const char* to_string(kv_call::kind what) noexcept;

/// "kv_client rank R: push of key K (N values)": how the error of every call begins.
std::string kv_call_text(std::uint32_t rank, std::string_view what, std::uint32_t key,
                         std::size_t values);

/// Keeps `call`'s promise with the error "kv_call_text(...): why".
void fail(kv_call& call, std::uint32_t rank, const std::string& why);

/// The calls a host queued for its agent; shared by the host's thread and the agent.
class kv_call_inbox {
public:
  /// The inbox of rank `rank`'s client (named in errors).
  explicit kv_call_inbox(std::uint32_t rank) : rank_(rank) {}

  /// Queues `call`; once the inbox is closed the call fails at once instead.
  void post(kv_call call);

  /// Every call queued so far, oldest first.
  std::vector<kv_call> take();

  /// Fails every queued call and every later one with `why` (the first close's).
  void close(const std::string& why);

private:
  std::uint32_t rank_;
  std::mutex mutex_;
  std::vector<kv_call> calls_;
  bool closed_ = false;
  std::string closed_why_;
};

/// What an agent is built from.
struct kv_client_agent_setup {
  std::uint32_t rank = 0;  ///< the host's worker rank, named in errors
  kv_worker worker = 0;    ///< its name towards the shards
  std::shared_ptr<kv_call_inbox> inbox;
  kv_options encoding;  ///< compression and encoder options (no shards: they come per call)
  caf::timespan timeout = std::chrono::seconds(30);  ///< a shard's answer at the latest
};

/// The calls of one key and the client's state for it.
struct kv_key_lane {
  std::unique_ptr<kv_pusher> pusher;  ///< made at the key's first call
  std::uint64_t step = 0;             ///< pushes sent (dist_sync steps of round 0)
  std::uint64_t serial = 0;           ///< calls started: tells a late answer from a current one
  std::deque<kv_call> waiting;        ///< the front one runs when `running`
  bool running = false;
  std::vector<bool> awaited;  ///< the running call's ranges not yet answered
  std::string failure;        ///< the running call's first error
};

/// A kv_client agent's state.
struct kv_client_agent_state {
  kv_client_agent_setup setup;
  std::map<std::uint32_t, kv_key_lane> lanes;
  std::map<caf::actor_addr, std::uint32_t> watched;  ///< monitored shards, by key

  /// Fails what is still queued or running: the store closed with calls outstanding.
  ~kv_client_agent_state();

  static inline const char* name = "strom.kv_client_agent";
};

/// Handles kv_calls_atom: runs the calls queued in the inbox (see above).
caf::behavior kv_client_agent(caf::stateful_actor<kv_client_agent_state>* self,
                              kv_client_agent_setup setup);

} // namespace strom::actors
