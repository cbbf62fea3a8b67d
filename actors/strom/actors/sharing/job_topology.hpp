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
// A lost node is survived by repair_mesh: its children are re-attached and wired with a resend
// of the round, and the lost node's frame count (which a plain job gets from the hub) is the
// union of the survivors' counts. A node that joins is wired to its parent before its restore.
//
// A parameter-averaging job always has a mesh (its averages are reduced along the tree, not
// gathered at the master's hub), and every relay is sent each version of the tree.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/job/job_master.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/sharing/topology.hpp"

namespace strom::actors {

/// The plan for a job's `nodes` (by rank) with the submission's topology and fanout; a
/// submission the scheduler let through always has a plan (an unknown kind plans plain). A
/// parameter-averaging job's is a mesh whatever the submission says.
topology_plan plan_for(const job_submission& submission, const std::vector<std::uint64_t>& nodes);

/// What the metrics show of `plan`: for a mesh the most neighbours any relay sends to, for
/// plain the hub's links, one to each of `nodes` nodes.
topology_summary summary_of(const topology_plan& plan, std::size_t nodes);

/// A mesh plan as `strom status` shows it: "mesh, fanout 2: 1 > 2 3; 2 > 4" (node ids,
/// each parent and its children); empty for plain.
std::string status_line_of(const topology_plan& plan);

/// Whether `plan` needs its edges wired before the first epoch (a mesh of two nodes or more).
bool needs_wiring(const topology_plan& plan);

/// Asks each of `children` (non-root nodes of `st.plan`) to connect its relay to its parent's,
/// the relays first resending what they kept of the round when `resend` (a repair); calls
/// `wired` once all answered, or `failed` (a strom_error naming the node) at the first that
/// did not. An edge whose child or parent was lost meanwhile counts as wired (that loss's
/// repair re-attaches it). Either is called at most once, and not after the job ended.
void wire_children(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
                   const std::vector<std::uint64_t>& children, bool resend,
                   std::function<void()> wired, std::function<void(const caf::error&)> failed);

/// Sends every relay of `st.plan` that tree (average_tree), for a parameter-averaging job:
/// its open averages start again along it (average_reduction.hpp).
void send_average_trees(caf::stateful_actor<job_master_state>* self,
                        const job_submission& submission);

/// Wires every non-root node of `st.plan` to its parent (before the first epoch).
void wire_mesh(caf::stateful_actor<job_master_state>* self, caf::timespan timeout,
               std::function<void()> wired, std::function<void(const caf::error&)> failed);

/// The nodes of `after` (not its root) whose parent differs from theirs in `before`: a lost
/// node's re-attached children (after a lost root, also the new root's siblings).
std::vector<std::uint64_t> reattached(const topology_plan& before, const topology_plan& after);

/// The frames of lost `origin` that every survivor applies once the mesh is repaired: the
/// newest round among `counts` and, per worker, the most frames a survivor counted in it.
/// Each survivor holds a prefix of the origin's frames, so the longest is their union.
origin_frames union_of(std::uint64_t origin, const std::vector<origin_frames>& counts);

/// Repairs the mesh after losing `lost` (its relay `lost_relay`), `st.plan` being the plan
/// without it and `before` the one with it: every survivor's relay forgets the lost relay
/// and counts the lost node's frames it passed; then the re-attached children connect to
/// their new parents, each side resending what it kept of the round (relay.hpp). Calls
/// `repaired` with the union of the counts, or `failed` at the first request that failed.
void repair_mesh(caf::stateful_actor<job_master_state>* self, const timing& timeouts,
                 std::uint64_t lost, const caf::actor& lost_relay, const topology_plan& before,
                 std::function<void(const origin_frames&)> repaired,
                 std::function<void(const caf::error&)> failed);

} // namespace strom::actors
