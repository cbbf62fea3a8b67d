#pragma once
// Cluster membership: node agents join the scheduler (join_request, with the protocol
// version) and keep alive; the scheduler tells job_masters about members lost and joined,
// and describes each node as node_status.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

namespace strom::actors {

/// Bumped whenever a message of protocol/ or the type-ID block of messages.hpp changes: nodes
/// of different versions refuse to join instead of misreading each other.
inline constexpr std::uint32_t protocol_version = 25;

/// A node that trains (the default).
inline constexpr const char* node_role_worker = "worker";
/// A node that holds parameter shards for kvstore jobs (strom node --role server).
inline constexpr const char* node_role_server = "server";

/// node_agent -> scheduler: asks to join (the sender is the agent the scheduler monitors).
struct join_request {
  std::uint32_t version = protocol_version;
  std::string name;           ///< unique in the cluster (default: host:pid)
  std::string address;        ///< the address the node advertises
  std::uint32_t cores = 1;
  std::uint32_t workers = 1;  ///< trainer slots the node offers
  /// What a scheduler that admits only its own nodes asks for (scheduler_setup); empty
  /// elsewhere.
  std::string admission_token;
  std::string role = node_role_worker;  ///< node_role_worker or node_role_server
  /// Bytes strom may place on the node (--memory-limit); 0: no limit set.
  std::uint64_t memory_limit = 0;
  /// Its speed factor (--speed-factor, compute_slowdown.hpp): how a pipeline job's stages
  /// are placed on it (pipeline mode, issue #20).
  double speed_factor = 1.0;
  /// Floating-point operations a second it measured before joining (compute/partition/
  /// speed_probe.hpp), its speed factor applied; 0: not measured.
  double compute_rate = 0.0;
};

template <class F>
typename F::result_type inspect(F& f, join_request& x) {
  return f(caf::meta::type_name("join_request"), x.version, x.name, x.address, x.cores,
           x.workers, x.admission_token, x.role, x.memory_limit, x.speed_factor,
           x.compute_rate);
}

/// scheduler -> node_agent: the answer to a join_request.
struct join_reply {
  bool accepted = false;
  std::uint64_t node_id = 0;  ///< the node's id in the cluster (origin of its frames)
  std::string reason;         ///< why the join was refused
};

template <class F>
typename F::result_type inspect(F& f, join_reply& x) {
  return f(caf::meta::type_name("join_reply"), x.accepted, x.node_id, x.reason);
}

/// scheduler -> node_agent: the answer to (keepalive_atom, node_id).
struct keepalive_reply {
  bool dropped = false;  ///< the scheduler no longer counts the node as a member
  std::string reason;    ///< why it was dropped
};

template <class F>
typename F::result_type inspect(F& f, keepalive_reply& x) {
  return f(caf::meta::type_name("keepalive_reply"), x.dropped, x.reason);
}

/// One node as the scheduler sees it.
struct node_status {
  std::uint64_t node_id = 0;
  std::string name;
  std::string address;
  std::uint32_t cores = 0;
  std::uint32_t workers = 0;
  /// How many times a node of this name has joined: 1 at the first join, one more each time
  /// it joins again after it left or was lost.
  std::uint32_t incarnation = 1;
  std::string role = node_role_worker;  ///< what the node joined as
  std::uint64_t memory_limit = 0;       ///< bytes strom may place there; 0: no limit set
  double speed_factor = 1.0;            ///< its announced speed factor (join_request)
  double compute_rate = 0.0;            ///< its measured compute rate (join_request)
};

template <class F>
typename F::result_type inspect(F& f, node_status& x) {
  return f(caf::meta::type_name("node_status"), x.node_id, x.name, x.address, x.cores,
           x.workers, x.incarnation, x.role, x.memory_limit, x.speed_factor,
           x.compute_rate);
}

/// "node 3 (w2 at 10.0.0.2)": how logs and failures name a node.
std::string describe(const node_status& node);

/// scheduler -> job_master: a node of the job left the cluster (lost or dropped).
struct member_lost {
  std::uint64_t node_id = 0;
  std::uint64_t membership_epoch = 0;  ///< the scheduler's epoch after the loss
  caf::error reason;                   ///< a strom_error (node_lost) with the words to show
  /// Seconds from the node's last sign of life (heartbeat answer or keepalive) to the loss.
  double silent_seconds = 0.0;
};

template <class F>
typename F::result_type inspect(F& f, member_lost& x) {
  return f(caf::meta::type_name("member_lost"), x.node_id, x.membership_epoch, x.reason,
           x.silent_seconds);
}

/// scheduler -> job_master (request, answered with whether the job takes it): a node joined
/// the cluster while the job runs and no other job holds it.
struct member_joined {
  node_status node;
  caf::actor agent;
  std::uint64_t membership_epoch = 0;  ///< the scheduler's epoch after the join
};

template <class F>
typename F::result_type inspect(F& f, member_joined& x) {
  return f(caf::meta::type_name("member_joined"), x.node, x.agent, x.membership_epoch);
}

} // namespace strom::actors
