#pragma once
// Every message strom's actors exchange, in ONE type-ID block: two nodes can only talk when
// they agree on it (shared/CAF-0.17-NOTES.md, "Message types"). Bulk data travels in
// ref-counted buffers that local sends share and remote sends serialise once.
//
// The messages themselves live in protocol/, one header per protocol, each struct beside its
// inspect; this header holds the type-ID block. Its order assigns the wire type IDs: add new
// entries at the end only. The atoms are defined by the block's CAF_ADD_ATOM entries.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/job/progress.hpp"
#include "strom/actors/job/training_report.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

#include "strom/actors/protocol/sharing.hpp"
#include "strom/actors/protocol/snapshots.hpp"
#include "strom/actors/protocol/averaging.hpp"
#include "strom/actors/protocol/kvstore.hpp"
#include "strom/actors/protocol/cluster.hpp"
#include "strom/actors/protocol/job_control.hpp"
#include "strom/actors/protocol/reports.hpp"
#include "strom/actors/protocol/clients.hpp"
#include "strom/actors/protocol/pipeline.hpp"

namespace strom::actors {

/// Registers every strom message type and the strom error category (errors.hpp) on `cfg`
/// (call before creating the actor_system).
void register_message_types(caf::actor_system_config& cfg);

} // namespace strom::actors

CAF_BEGIN_TYPE_ID_BLOCK(strom, first_custom_type_id)

  CAF_ADD_TYPE_ID(strom, (strom::actors::shared_frame))
  CAF_ADD_TYPE_ID(strom, (strom::actors::step_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::epoch_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::drain_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::drain_marker))
  CAF_ADD_TYPE_ID(strom, (strom::actors::framing_stats))
  CAF_ADD_TYPE_ID(strom, (strom::actors::relay_stats))
  CAF_ADD_TYPE_ID(strom, (strom::actors::training_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::epoch_totals))
  CAF_ADD_TYPE_ID(strom, (strom::actors::test_result))
  CAF_ADD_TYPE_ID(strom, (strom::actors::step_progress))
  CAF_ADD_TYPE_ID(strom, (strom::actors::epoch_summary))
  CAF_ADD_TYPE_ID(strom, (strom::actors::join_request))
  CAF_ADD_TYPE_ID(strom, (strom::actors::join_reply))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_submission))
  CAF_ADD_TYPE_ID(strom, (strom::actors::submit_reply))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_assignment))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_ready))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_failure))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_progress))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_epoch_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_sharing_report))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_progress))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_epoch))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_finished))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_status))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_status))
  CAF_ADD_TYPE_ID(strom, (strom::actors::cluster_status))
  CAF_ADD_TYPE_ID(strom, (strom::actors::keepalive_reply))
  CAF_ADD_TYPE_ID(strom, (strom::actors::member_lost))
  CAF_ADD_TYPE_ID(strom, (strom::actors::snapshot_chunk))
  CAF_ADD_TYPE_ID(strom, (strom::actors::snapshot_sent))
  CAF_ADD_TYPE_ID(strom, (strom::actors::round_work))
  CAF_ADD_TYPE_ID(strom, (strom::actors::round_plan))
  CAF_ADD_TYPE_ID(strom, (strom::actors::origin_frames))
  CAF_ADD_TYPE_ID(strom, (strom::actors::epoch_check))
  CAF_ADD_TYPE_ID(strom, (strom::actors::topology_summary))
  CAF_ADD_TYPE_ID(strom, (strom::actors::member_joined))
  CAF_ADD_TYPE_ID(strom, (strom::actors::assembled_snapshot))
  CAF_ADD_TYPE_ID(strom, (strom::actors::topology_update))
  CAF_ADD_TYPE_ID(strom, (strom::actors::job_checkpointed))
  CAF_ADD_TYPE_ID(strom, (strom::actors::worker_activity))
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_activity))

  // Atoms: at most 10 characters each (CAF 0.17 atom_value).
  CAF_ADD_ATOM(strom, strom::actors, step_atom, "step")
  CAF_ADD_ATOM(strom, strom::actors, start_atom, "start")
  CAF_ADD_ATOM(strom, strom::actors, siblings_atom, "siblings")
  CAF_ADD_ATOM(strom, strom::actors, publish_atom, "publish")
  CAF_ADD_ATOM(strom, strom::actors, subscribe_atom, "subscribe")
  CAF_ADD_ATOM(strom, strom::actors, add_peer_atom, "add_peer")
  CAF_ADD_ATOM(strom, strom::actors, stats_atom, "stats")
  CAF_ADD_ATOM(strom, strom::actors, ping_atom, "ping")
  CAF_ADD_ATOM(strom, strom::actors, pong_atom, "pong")
  CAF_ADD_ATOM(strom, strom::actors, submit_atom, "submit")
  CAF_ADD_ATOM(strom, strom::actors, attach_atom, "attach")
  CAF_ADD_ATOM(strom, strom::actors, status_atom, "status")
  CAF_ADD_ATOM(strom, strom::actors, stop_atom, "stop")
  CAF_ADD_ATOM(strom, strom::actors, evaluate_atom, "evaluate")
  CAF_ADD_ATOM(strom, strom::actors, node_hung_atom, "node_hung")
  CAF_ADD_ATOM(strom, strom::actors, prepared_atom, "prepared")
  CAF_ADD_ATOM(strom, strom::actors, watchdog_atom, "watchdog")
  CAF_ADD_ATOM(strom, strom::actors, cancel_atom, "cancel")
  CAF_ADD_ATOM(strom, strom::actors, keepalive_atom, "keepalive")
  CAF_ADD_ATOM(strom, strom::actors, dropped_atom, "dropped")
  CAF_ADD_ATOM(strom, strom::actors, snapshot_atom, "snapshot")
  CAF_ADD_ATOM(strom, strom::actors, forget_atom, "forget")
  CAF_ADD_ATOM(strom, strom::actors, checked_atom, "checked")
  CAF_ADD_ATOM(strom, strom::actors, cut_atom, "cut")
  CAF_ADD_ATOM(strom, strom::actors, restore_atom, "restore")
  CAF_ADD_ATOM(strom, strom::actors, rejoin_atom, "rejoin")
  CAF_ADD_ATOM(strom, strom::actors, wire_atom, "wire")
  CAF_ADD_ATOM(strom, strom::actors, wired_atom, "wired")
  CAF_ADD_ATOM(strom, strom::actors, checkpoint_atom, "checkpoint")
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_shard_entry))
  CAF_ADD_TYPE_ID(strom, (strom::actors::shard_assignment))
  CAF_ADD_TYPE_ID(strom, (strom::actors::shards_ready))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_push))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_values))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_round))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_done))
  CAF_ADD_TYPE_ID(strom, (strom::actors::shard_stats))
  CAF_ADD_ATOM(strom, strom::actors, stall_atom, "stall")
  // chain replication of key ranges
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_chain_link))
  CAF_ADD_TYPE_ID(strom, (strom::actors::chain_wiring))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_chain_step))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_round_record))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_shard_state))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_reroute))

  // kv_client (embedding a KV store, issue #19): a shard's current values without a push,
  // and a client agent's wake-up for the calls its host queued.
  CAF_ADD_ATOM(strom, strom::actors, kv_pull_atom, "kv_pull")
  CAF_ADD_ATOM(strom, strom::actors, kv_state_atom, "kv_state")
  CAF_ADD_ATOM(strom, strom::actors, kv_calls_atom, "kv_calls")

  // submit's HTML report (issue 21): the nodes' figures that job_progress carries to clients
  CAF_ADD_TYPE_ID(strom, (strom::actors::node_figures))
  CAF_ADD_TYPE_ID(strom, (strom::actors::cluster_figures))

  // pipeline mode (issue #20)
  CAF_ADD_TYPE_ID(strom, (strom::actors::pipeline_summary))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_assignment))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_ready))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_links))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_run))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_forward))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_backward))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_epoch_end))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_point))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_snapshot_note))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_rollback))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_restore))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_snapshot_fetch))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_update))

  // kvstore local aggregation (issue #19): a node's trainers push once, through its first
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_local_step))
  CAF_ADD_TYPE_ID(strom, (strom::actors::kv_local_answer))

  // parameter averaging as a tree reduction (issue #19)
  CAF_ADD_TYPE_ID(strom, (strom::actors::average_part))
  CAF_ADD_TYPE_ID(strom, (strom::actors::average_total))
  CAF_ADD_TYPE_ID(strom, (strom::actors::average_tree))

  // re-partitioning a pipeline (issue #20)
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_refill))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_state_fetch))
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_retire))

  // a pipeline's checkpoint, the whole network's (issue #39)
  CAF_ADD_TYPE_ID(strom, (strom::actors::stage_checkpoint))

  // a joiner's replicas are built: its restore runs beside its data loading (issue #40)
  CAF_ADD_ATOM(strom, strom::actors, built_atom, "built")

CAF_END_TYPE_ID_BLOCK(strom)
