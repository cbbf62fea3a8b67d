#pragma once
// Typed handles between roles: what one actor may send another, as CAF typed_actor interfaces
// (0.17's replies_to/reacts_to form). An actor holds the handle of the narrowest interface it
// needs of a peer, made with caf::actor_cast where the peer is spawned or joins, so that a
// message the peer does not take is a compile error at the sender (the static assertions of
// tests/actors/protocol/test_roles.cpp show it). The actors themselves stay dynamically
// typed; each interface below names handlers of the role it points at. A handle that travels
// as a message element of its own stays caf::actor (typed handles have no type ID).

#include <cstdint>
#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "strom/actors/messages.hpp"

namespace strom::actors {

/// A node agent as its heartbeat monitor sees it (cluster/node_agent.cpp, ping handler).
using pingable_actor = caf::typed_actor<caf::replies_to<ping_atom>::with<pong_atom>>;

/// The scheduler as a heartbeat monitor reports to it (cluster/scheduler.cpp).
using hung_reporter_actor =
  caf::typed_actor<caf::reacts_to<node_hung_atom, std::uint64_t, std::string>>;

/// The scheduler as a node agent talks to it: the join, keepalives and the node's reports
/// (cluster/scheduler.cpp); a remote proxy on a real node.
using agent_scheduler_actor =
  caf::typed_actor<caf::replies_to<join_request>::with<join_reply>,
                   caf::replies_to<keepalive_atom, std::uint64_t>::with<keepalive_reply>,
                   caf::reacts_to<node_progress>, caf::reacts_to<node_epoch_report>,
                   caf::reacts_to<node_failure>>;

/// A job_master as the scheduler drives it (job/job_master.cpp): the job's nodes' reports
/// and membership, and the clients' requests about the job, passed on.
using job_master_actor =
  caf::typed_actor<caf::replies_to<member_joined>::with<bool>, caf::reacts_to<member_lost>,
                   caf::reacts_to<node_progress>, caf::reacts_to<node_epoch_report>,
                   caf::reacts_to<node_failure>,
                   caf::replies_to<attach_atom, std::uint64_t>::with<submit_reply>,
                   caf::replies_to<cancel_atom, std::uint64_t>::with<submit_reply>>;

/// The plain topology's hub relay as its job_master drives it (sharing/relay.cpp): the
/// nodes' relays added, a lost one's frames counted and forgotten, the counts at the end.
using hub_actor =
  caf::typed_actor<caf::reacts_to<add_peer_atom, caf::actor>,
                   caf::replies_to<forget_atom, std::uint64_t, caf::actor>::with<origin_frames>,
                   caf::replies_to<stats_atom>::with<relay_stats>>;

/// A job's checkpoint keeper as its job_master asks it (cluster/checkpoint_keeper.cpp): take
/// a checkpoint of the given node agent's snapshot.
using keeper_actor = caf::typed_actor<
  caf::replies_to<checkpoint_atom, std::uint64_t, caf::actor>::with<snapshot_sent>>;

/// A node agent as its job's job_master drives it (cluster/node_agent.cpp, node_serving.cpp,
/// sharing/node_wiring.cpp): the assignment and each mode's set-up, rounds, restores,
/// evaluation, the stall watch's question, the end.
using job_agent_actor = caf::typed_actor<
  caf::replies_to<job_assignment>::with<node_ready>,
  caf::replies_to<shard_assignment>::with<shards_ready>,
  caf::replies_to<stage_assignment>::with<stage_ready>, caf::reacts_to<stage_retire>,
  caf::replies_to<topology_update>::with<wired_atom>, caf::reacts_to<chain_wiring>,
  caf::reacts_to<kv_reroute>, caf::reacts_to<round_plan>,
  caf::reacts_to<forget_atom, std::uint64_t, std::uint64_t>,
  caf::replies_to<restore_atom, std::uint64_t, caf::actor>::with<snapshot_sent>,
  caf::reacts_to<cut_atom, std::uint64_t, std::uint32_t>,
  caf::replies_to<evaluate_atom, std::uint64_t, std::uint32_t>::with<epoch_check>,
  caf::replies_to<stop_atom, std::uint64_t>::with<node_sharing_report>,
  caf::replies_to<stall_atom, std::uint64_t>::with<node_activity>>;

/// The scheduler as a job_master reports to it (cluster/scheduler.cpp): status, checkpoints,
/// nodes it lets go, the end.
using job_scheduler_actor =
  caf::typed_actor<caf::reacts_to<job_status>, caf::reacts_to<job_finished>,
                   caf::reacts_to<job_checkpointed>,
                   caf::reacts_to<forget_atom, std::uint64_t, std::uint64_t>>;

/// A job's client (runtime/cluster/job_client.cpp, or the live simulation's): told the job's
/// progress, epochs and end by its job_master, or by the scheduler when the job ends without one.
using job_client_actor =
  caf::typed_actor<caf::reacts_to<job_progress>, caf::reacts_to<job_epoch>,
                   caf::reacts_to<job_finished>>;

/// A relay's subscriber, a trainer of its node (worker/trainer.cpp): what other nodes sent.
using frame_sink_actor =
  caf::typed_actor<caf::reacts_to<shared_frame>, caf::reacts_to<drain_marker>,
                   caf::reacts_to<average_total>>;

/// A relay's peer, another node's relay (sharing/relay.cpp; in a live simulation a link
/// standing in for the network): frames and markers, and averaging's partial sums and totals.
using relay_peer_actor = frame_sink_actor::extend<caf::reacts_to<average_part>>;

/// A trainer as the node's other trainers see it (worker/trainer.cpp): their frames and drain
/// markers, and in a kvstore job the node's local aggregation through its first trainer.
using trainer_sibling_actor =
  caf::typed_actor<caf::reacts_to<shared_frame>, caf::reacts_to<drain_marker>,
                   caf::reacts_to<kv_local_step>, caf::reacts_to<kv_done>,
                   caf::reacts_to<kv_local_answer>>;

/// A node's relay as its trainers publish to it (sharing/relay.cpp): their frames, drain
/// markers and averaging parts, for the other nodes.
using trainer_relay_actor =
  caf::typed_actor<caf::reacts_to<publish_atom, shared_frame>,
                   caf::reacts_to<publish_atom, drain_marker>,
                   caf::reacts_to<publish_atom, average_part>>;

/// A trainer's supervisor, the node agent (cluster/node_agent.cpp): the trainers' reports.
using trainer_supervisor_actor =
  caf::typed_actor<caf::reacts_to<step_report>, caf::reacts_to<epoch_report>,
                   caf::reacts_to<drain_report>>;

} // namespace strom::actors
