#pragma once
// The long-running processes of a cluster: a scheduler node that admits workers and runs
// jobs, and worker nodes that join it and train. Each runs until SIGINT or SIGTERM (a clean
// stop) or until it can no longer work (a refused join, a lost scheduler: an error).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/fwd.hpp>

#include "strom/actors/protocol/cluster.hpp"
#include "strom/actors/timing.hpp"
#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/observability/observation.hpp"
#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::runtime {

/// How a scheduler node listens and watches its workers.
struct scheduler_node_options {
  endpoint listen;           ///< port 0: a free port
  std::string advertise;     ///< --advertise; empty: chosen (see advertise_address.hpp)
  std::string netmask;       ///< --netmask CIDR
  /// Its own and its job masters' intervals and timeouts (--heartbeat-interval,
  /// --heartbeat-timeout, --stall-warning).
  actors::timing timeouts;
  std::uint64_t checkpoint_every = 0;  ///< --checkpoint-every: steps; 0: every epoch
  /// What the port admits (link_guard.hpp). With guard.tls.context set, every link speaks
  /// TLS, clients' certificates are admitted too and only node certificates may join.
  guard_limits guard;
  /// --state-dir: where the scheduler keeps its record and its jobs' checkpoints, and takes
  /// them up from when it starts again (state_dir.hpp); empty: it keeps nothing.
  std::string state_dir;
  observation_options observe;  ///< --metrics-listen
};

/// Which scheduler a worker node joins and what it offers.
struct worker_node_options {
  endpoint scheduler;
  std::string name;          ///< empty: HOSTNAME:PID
  std::string advertise;     ///< --advertise; empty: chosen (see advertise_address.hpp)
  std::string netmask;       ///< --netmask CIDR
  std::uint32_t workers = 0; ///< trainer slots; 0: one per core
  std::string role = actors::node_role_worker;  ///< --role: worker, or server (kvstore shards)
  std::chrono::milliseconds connect_timeout = default_connect_timeout;  ///< --connect-timeout
  /// --tls-ca, --tls-cert, --tls-key: every link (the scheduler, relays) speaks TLS with this
  /// identity; null: plaintext.
  std::shared_ptr<const tls_context> tls;
  /// The node agent's timeouts; --reconnect-timeout sets reconnect_timeout: the scheduler
  /// silent this long, or gone and not back within it, the node gives up.
  actors::timing timeouts;
  observation_options observe;  ///< --metrics-listen
  std::uint64_t memory_limit = 0;  ///< --memory-limit: bytes strom may place here; 0: no limit
  /// --device: where this node's workers step, whatever the job says; unset: the job's.
  std::optional<schema::Device> device{};
  actors::node_speed speed{};      ///< --speed-factor, --speed-drift (a testing aid)
};

/// Runs a scheduler on `options.listen` until SIGINT or SIGTERM. Once listening it prints
/// "strom scheduler listening on HOST:PORT (advertised as ADDRESS:PORT)" on stdout.
result<void> run_scheduler_node(const scheduler_node_options& options);

/// Joins the scheduler and trains its jobs until SIGINT or SIGTERM. A lost scheduler (its
/// connection broke: it crashed or restarts) ends the node's job; the node connects again,
/// with back-off, and joins under its name as a new incarnation. Errors when the join is
/// refused, the scheduler cannot be reached (again within options.timeouts.reconnect_timeout), says
/// it dropped the node (e.g. after the process was stopped for longer than the heartbeat
/// timeout), or answers nothing for options.timeouts.reconnect_timeout.
result<void> run_worker_node(const worker_node_options& options);

/// The scheduler published at `where`, reached through `system` (which loads the middleman)
/// and a link_guard; errors name HOST:PORT and say in words what is there instead.
result<guarded_connection> connect_to_scheduler(caf::actor_system& system, const endpoint& where,
                                                const connect_options& options = {});

/// connect_to_scheduler tried again, with a pause growing from 100 ms to 2 s between tries,
/// until it succeeds, options.interrupted says so, or `limit` passed (the last error then).
result<guarded_connection> reconnect_to_scheduler(caf::actor_system& system,
                                                  const endpoint& where,
                                                  const connect_options& options,
                                                  caf::timespan limit);

} // namespace strom::runtime
