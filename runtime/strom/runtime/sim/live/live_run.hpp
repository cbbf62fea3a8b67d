#pragma once
// Live mode: the product's own actors — scheduler, job_master, hub, node agents, relays,
// trainers — train the scenario's job for real, every node in its own actor system in this
// process, all driven from one thread in virtual time:
//   - every system runs on CAF's test coordinator; the run picks which system goes next by a
//     random stream drawn from the seed, so one seed gives one order of events, bit for bit;
//   - timers and heartbeats fire when virtual time reaches them (the actors read time only
//     through their clock, actors/timing.hpp);
//   - a step costs its node the scenario's step costs (a calibration of this machine, or
//     given) divided by the node's speed, and a frame applied its decode cost; a node computes
//     nothing else until that time passed (its workers share the cost: each has a core);
//   - frames between nodes cross shims on the links (live_network.hpp), which apply latency,
//     bandwidth and the scenario's frame faults, and with a TLS identity seal and open them;
//   - a kill stops the node's agent (its peers see it go at once); a silent kill or a hang
//     stops running its system (only heartbeats tell); a restart or a join starts a new
//     system that joins as a new incarnation; a partition stops running the nodes cut off
//     from the scheduler's group until it heals;
//   - a server node (kvstore) holds the job's parameter shards; their chain links cross the
//     simulated network like relays' links;
//   - the scheduler's kill ends it with its job masters and hubs; its restart takes up the
//     state it kept (in memory here), the nodes' daemons join it again with back-off and the
//     client attaches again, as `strom node` and `strom submit` do.
// Data loading and evaluation run on the agents' helper threads as in the product; the run
// waits for them, so they cost no virtual time. The product trains whole epochs: a scenario
// given in steps runs the epochs that hold that many steps of every worker.

#include <cstdint>

#include "strom/compute/result.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/scenario.hpp"
#include "strom/runtime/sim/sim_trace.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime::sim {

/// Runs `s` live with `seed` for the order of events and the faults' draws; every event goes
/// to `trace`, the job's progress to `observer` (may be null). With `tls`, every link is a TLS
/// connection on which each node presents that identity (the scenario's costs then hold
/// TLS's rates: require_tls_costs). The figures are the job's own report, in virtual seconds.
result<model_outcome> run_live(const scenario& s, std::uint64_t seed, sim_trace& trace,
                               training_observer* observer = nullptr,
                               const tls_context* tls = nullptr);

} // namespace strom::runtime::sim
