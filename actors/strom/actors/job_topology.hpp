#pragma once
// A job's topology as its job_master handles it: the plan from the submission's options, the
// summary the metrics show, and, for a mesh, the wiring before the first epoch. Plain needs
// no wiring: every node's relay has the master's hub as its peer from the assignment on.
//
// Mesh wiring: each node publishes its relay on a guarded port (node_ready.relay_endpoint);
// the job_master asks every non-root node's agent (topology_update) to connect to its
// parent's relay. The child's relay is added by the parent's relay before it answers, and
// the parent's by the child's agent before it answers the job_master, so once every child
// has answered every edge carries frames both ways; only then does the first epoch start.
// A mesh job cannot yet survive a lost node (the hub's frame count that a plain job's loss
// handling relies on has no counterpart in a tree): it fails with mesh_loss_error.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/job_master.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/topology.hpp"

namespace strom::actors {

/// The plan for a job's `nodes` (by rank) with the submission's topology and fanout; a
/// submission the scheduler let through always has a plan (an unknown kind plans plain).
topology_plan plan_for(const job_submission& submission, const std::vector<std::uint64_t>& nodes);

/// What the metrics show of `plan`: for a mesh the most neighbours any relay sends to, for
/// plain the hub's links, one to each of `nodes` nodes.
topology_summary summary_of(const topology_plan& plan, std::size_t nodes);

/// A mesh plan as `strom status` shows it: "mesh, fanout 2: 1 > 2 3; 2 > 4" (node ids,
/// each parent and its children); empty for plain.
std::string status_line_of(const topology_plan& plan);

/// Whether `plan` needs its edges wired before the first epoch (a mesh of two nodes or more).
bool needs_wiring(const topology_plan& plan);

/// Asks every non-root node of `st.plan` to connect its relay to its parent's; calls `wired`
/// once all answered, or `failed` (a strom_error naming the node) at the first that did not.
/// Either is called at most once, and not after the job ended (st.outcome).
void wire_mesh(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
               std::function<void()> wired, std::function<void(const caf::error&)> failed);

/// Why a mesh job ends when it loses `lost` (as describe() names it).
caf::error mesh_loss_error(const std::string& lost);

} // namespace strom::actors
