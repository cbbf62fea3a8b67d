#pragma once
// A kvstore worker's part of the trainer (trainer_kv.cpp): its steps are paced by the shards'
// answers, never by frames. The node's first trainer keeps the node's pushes (`pusher` and
// the rounds); every worker keeps its own step's answers.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/messages.hpp"

namespace strom::actors {

/// The push of a kvstore node, kept by its first trainer (the only one that pushes): where
/// each key range's push goes (its head, re-routed after a server loss), the pushes of the
/// node step not yet answered (kept to be sent again to a new head), and whose gradients the
/// step carries.
struct kv_flight {
  std::vector<caf::actor> heads;                   ///< by range
  std::vector<std::optional<kv_push>> unanswered;  ///< by range
  std::vector<std::uint64_t> sends;  ///< by range: an answer to an earlier send is dropped
  std::size_t waiting = 0;           ///< ranges whose answer the node step waits for
  std::uint32_t round = 0;
  std::uint64_t step = 0;              ///< the node step in flight; 0: none
  std::vector<std::uint32_t> carried;  ///< the slots whose gradients it carries
};

/// How far a kvstore node's workers got in one round, as its first trainer counts them.
struct kv_node_round {
  std::vector<std::uint64_t> added;  ///< by slot: the latest step whose gradient it computed
  std::vector<std::optional<std::uint64_t>> finished;  ///< by slot: its steps, once done
  std::uint64_t pushed = 0;  ///< node steps pushed (the latest may be in flight)
  bool done_sent = false;    ///< the shards were told the node's steps (kv_done)
};

/// A kvstore trainer's own step: the answers it waits for and its figures, counted once
/// every range's answer is in its replica.
struct kv_own_step {
  std::size_t waiting = 0;
  float loss = 0.0f;
  std::size_t samples = 0;
  std::uint32_t other_round = 0;  ///< the node step it takes without having carried it
  std::uint64_t other_step = 0;
  std::size_t other_waiting = 0;  ///< that step's ranges not in its replica yet
};

/// The shards' latest parameters and updater state on their way into the replica (the node's
/// first trainer, before an evaluation): a range whose head was lost waits for its re-route
/// (kv_reroute).
struct kv_latest_pull {
  caf::typed_response_promise<kv_pull_atom> promise;
  std::vector<bool> waiting;  ///< by range: its values are not in the replica yet
  std::uint64_t serial = 0;   ///< answers to an earlier pull are dropped
};

/// What a kvstore trainer keeps.
struct kvstore_worker_state {
  std::optional<kv_pusher> pusher;  ///< the node's pushes: set in its first trainer only
  kv_flight sent;                   ///< the node step in flight (its first trainer's)
  std::map<std::uint32_t, kv_node_round> rounds;  ///< by round (its first trainer's)
  kv_own_step own;                        ///< its own step waiting for the answers
  std::vector<float> scratch;             ///< an answer being decoded
  std::optional<kv_latest_pull> pulling;  ///< the shards' latest being taken
  std::uint64_t pulls = 0;                ///< numbers the pulls
};

} // namespace strom::actors
