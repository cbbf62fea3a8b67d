#pragma once
// The job_master: one per submitted job, spawned by the scheduler with the job's nodes. It owns
// the job's life: assigns it to the nodes (the plain topology's hub relay that passes every
// node's frames to all others), assigns the data round by round, paces the epochs, has the
// first live node evaluate after each, sums progress for its clients, watches for silence, and
// ends the job once with one outcome: succeeded, failed (every node lost, a node's failure, a
// timeout) or cancelled.
//
// A lost node does not end the job. The hub stops passing on the node's frames and says how
// many of each of its workers' frames it passed in the current round: those every survivor
// applies. In a mesh every survivor's relay says so, the most is what all apply once the
// tree is repaired (job_topology.hpp, repair_mesh). The survivors stop waiting for the node,
// finish the round, and then train, in a makeup round split among them, the samples of the lost workers' remaining batches, so each
// epoch covers the training set once (a batch the node trained but whose frame never left
// it is trained again: samples_redone). From the next epoch the data is partitioned among
// the survivors.
//
// It tells the scheduler its status as it changes; at the end it asks the nodes to stop the
// job's actors, then tells the scheduler the outcome (which frees the nodes) and the
// clients, and ends itself once the nodes answered. Membership stays the scheduler's: it
// tells a job_master when one of its nodes is lost.
//
// Its core is job/: job_master.cpp (the job's life), job_membership.cpp (losses, joiners, the
// pause) and job_metrics.cpp, whose steps job_master_steps.hpp declares. Each mode and concern
// owns its part's state (a member of job_master_state) and steps in its own header:
// kvstore/job_kvstore.hpp, pipeline/job_pipeline.hpp, sharing/job_topology.hpp (a mesh's
// wiring), job/job_stall.hpp (the stall watch), job/job_checkpoints.hpp.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/job/data_assignment.hpp"
#include "strom/actors/job/job_checkpoints.hpp"
#include "strom/actors/job/job_placement.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/job/job_stall.hpp"
#include "strom/actors/job/metrics_sink.hpp"
#include "strom/actors/kvstore/job_kvstore.hpp"
#include "strom/actors/pipeline/job_pipeline.hpp"
#include "strom/actors/request_while_alive.hpp"
#include "strom/actors/cluster/scheduler_store.hpp"
#include "strom/actors/sim_seams.hpp"
#include "strom/actors/timing.hpp"
#include "strom/actors/sharing/topology.hpp"

namespace strom::actors {

/// A node a job runs on, as the scheduler hands it over.
struct job_node {
  node_status status;
  job_agent_actor agent;  ///< its node_agent
};

/// How long a job waits for nodes to join (--rejoin-timeout, else the timeouts' default):
/// paused below its minimum, or resumed after the scheduler's restart.
caf::timespan rejoin_timeout_of(const job_submission& submission, const timing& timeouts);

/// What a job_master starts from.
struct job_master_setup {
  std::uint64_t job_id = 0;
  job_submission submission;
  std::vector<job_node> nodes;  ///< by rank; at least one
  std::vector<job_node> servers;  ///< a kvstore job's server nodes (parameter_shards)
  job_scheduler_actor scheduler;  ///< told job_status as it changes, then the job_finished
  std::vector<job_client_actor> clients;  ///< told progress and the end: submitter, attached
  timing timeouts;  ///< every request it makes has one
  bool failures_reported = false;  ///< the scheduler's (scheduler_setup)
  /// Where checkpoints go (the scheduler's --state-dir); null: the job takes none.
  std::shared_ptr<scheduler_store> store;
  /// A checkpoint at the end of an epoch once this many steps (a worker's) passed since the
  /// last (--checkpoint-every); 0: every epoch.
  std::uint64_t checkpoint_every = 0;
  /// Set when the scheduler restarted: the job goes on from its saved state (and, when it
  /// has one, its checkpoint in `store`) instead of from the start.
  std::optional<saved_job> resume;
  /// Told the job's figures as they change; null: nobody watches (metrics_sink.hpp).
  std::shared_ptr<metrics_sink> metrics;
  /// Checks the job's memory on its nodes and places a pipeline job's stages; null: neither.
  job_placer place;
  /// Set in a live simulation: how the hub reaches the nodes' relays (sim_seams.hpp).
  relay_reach reach_relay{};
};

/// A node that joined while the job runs, until it trains its first round.
struct job_joiner {
  job_node node;
  caf::actor_clock::time_point joined;
  bool ready = false;  ///< its actors run (node_ready arrived)
};

/// A job_master's state.
struct job_master_state {
  job_status status;
  std::vector<std::uint64_t> nodes;              ///< node ids by rank, the live ones
  std::map<std::uint64_t, job_node> members;     ///< the job's nodes still in the cluster
  std::map<std::uint64_t, node_ready> prepared;  ///< by node: its relay and worker count
  /// Grows each time the prepared job starts (wiring, taking the checkpoint): a node lost
  /// meanwhile starts it again without it, and the earlier start's answers no longer count.
  std::uint32_t start_attempt = 0;
  std::vector<job_client_actor> clients;         ///< told progress, epochs and the end
  hub_actor hub;  ///< the plain topology's master relay; fresh per job (sequences restart)
  topology_plan plan;                            ///< who sends frames to whom
  data_plan data;
  std::uint32_t round = 0;                       ///< the round running (or last run)
  std::map<std::uint64_t, std::vector<round_work>> work;  ///< this round's, by node
  std::vector<std::uint32_t> makeup;  ///< samples lost nodes left untrained this epoch
  std::uint32_t forgetting = 0;       ///< lost nodes whose frame count the hub has not sent
  bool round_running = false;         ///< trainers are in round `round`
  bool cut = false;                   ///< round `round` was cut short for joiners
  std::map<std::uint64_t, job_joiner> joining;  ///< nodes joining, by id
  std::uint32_t restoring = 0;        ///< joiners' trainers whose snapshot is awaited
  std::optional<bool> paused;         ///< too few nodes: the round to start (makeup or not)
  std::uint64_t batches_per_round = 0;
  std::map<std::uint64_t, node_progress> progress;           ///< latest, by node, this round
  std::map<std::uint64_t, node_epoch_report> epoch_reports;  ///< this round, by node
  std::map<std::uint64_t, drain_report> drained;  ///< latest totals by node, lost ones kept
  epoch_totals epoch_done;                        ///< this epoch's rounds so far
  std::uint64_t steps_done = 0;                   ///< worker steps of the epochs recorded
  std::map<std::uint64_t, node_sharing_report> sharing;      ///< at the end, by node
  std::vector<std::string> lost;                  ///< the nodes lost, described
  training_report report;
  caf::actor_clock::time_point submitted;
  caf::actor_clock::time_point epoch_started;
  caf::actor_clock::time_point round_started;
  caf::actor_clock::time_point last_heard;  ///< the latest message from any of its nodes
  /// The node asked to evaluate the epoch, until it answers.
  std::optional<std::uint64_t> evaluator;
  bool finishing = false;                   ///< the last epoch ended: counts are collected
  std::optional<job_finished> outcome;      ///< set once the job ended
  std::set<std::uint64_t> stopping;         ///< nodes whose stop answer is awaited at the end
  kvstore_run kvstore;                   ///< a kvstore job's servers (job_kvstore.hpp)
  std::optional<pipeline_run> pipeline;  ///< set for a pipeline job (job_pipeline.hpp)
  stall_watch_state stall;               ///< the stall watch's (job_stall.hpp)
  job_checkpoint_state checkpoints;      ///< (job_checkpoints.hpp)
  /// Requests to the nodes' actors, given up when the node is lost (request_while_alive.hpp).
  pending_requests awaiting;

  static inline const char* name = "strom.job_master";
};

/// Handles: (stall_atom, job_id) from itself every quarter stall_warning, which watches
/// for stalls (stall_watch.hpp; the verdict goes into job_status.stall and the log);
/// node_progress, node_epoch_report, node_failure (the scheduler passes them on from
/// the job's nodes); member_lost from the scheduler; member_joined -> bool (whether the job
/// takes the node; it is brought in at the next round, cutting the running one short);
/// stage_epoch_end from a pipeline job's last subnet (job_pipeline.cpp); stage_snapshot_note
/// from a stage's holder (job_stage_restore.cpp);
/// (attach_atom, job_id) -> submit_reply
/// (the sender becomes a client); (cancel_atom, job_id) -> submit_reply; watchdog_atom.
caf::behavior job_master(caf::stateful_actor<job_master_state>* self, job_master_setup setup);

/// The state an ended job shows in status: "succeeded", "cancelled" or "failed".
const char* state_of(const job_finished& outcome);

} // namespace strom::actors
