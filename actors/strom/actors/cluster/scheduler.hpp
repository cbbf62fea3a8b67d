#pragma once
// The scheduler: the master of a cluster, and its membership. It admits nodes (join with a
// protocol check, one name per node, an incarnation per name), watches them (their
// node_agent's down message for a crash, a heartbeat_monitor each for a hang), counts every
// change of membership in a membership epoch, and starts one job_master per submitted job on
// nodes no other job holds. A lost node is told to the job_master of the job it ran (which
// goes on without it); a job's nodes are free again once its job_master
// told the outcome (it asked them to stop the job before). Clients talk to the scheduler only: it passes their requests about a running job
// and the nodes' reports on to the job's job_master.
//
// With a store (--state-dir) it keeps its record there and takes it up after a restart
// (scheduler_restart.cpp; both files share scheduler_steps.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/cluster/dropped_nodes.hpp"
#include "strom/actors/job/job_master.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/job/metrics_sink.hpp"
#include "strom/actors/cluster/scheduler_store.hpp"
#include "strom/actors/timing.hpp"

namespace strom::actors {

/// What a scheduler starts from.
struct scheduler_setup {
  timing timeouts;  ///< its own and its job masters'
  /// Non-empty: only nodes whose join_request carries this token join (an in-process
  /// cluster's own nodes). Empty: any node that speaks the protocol joins.
  std::string admission_token;
  /// Set: asked about the process a join comes from (the sender's node id) and the name it
  /// joins under; a text refuses the join with it (with TLS: a certificate without the node
  /// role, or made out to another name). Null: no such check.
  std::function<std::optional<std::string>(const caf::node_id&, const std::string& name)>
    node_admission;
  /// Where the scheduler keeps its record and its jobs' checkpoints (--state-dir); null:
  /// nothing survives the scheduler.
  std::shared_ptr<scheduler_store> store;
  /// The record the store held at start: the scheduler takes up its counters and resumes
  /// its running jobs once their nodes joined again.
  std::optional<scheduler_record> restored;
  /// Steps between a job's checkpoints (--checkpoint-every); 0: every epoch.
  std::uint64_t checkpoint_every = 0;
  /// Told jobs' figures and heartbeat round trips; null: nobody watches (metrics_sink.hpp).
  std::shared_ptr<metrics_sink> metrics;
  /// Checks each job's memory against its nodes and places a pipeline job's stages; null:
  /// no check, and pipeline jobs fail (job_placement.hpp).
  job_placer place;
  /// Set in a live simulation: how the hub reaches the nodes' relays (sim_seams.hpp).
  relay_reach reach_relay{};
  /// Set where one caller reports every job's failure to its user (an in-process cluster's
  /// command): the job masters log theirs at debug, not as a second warning.
  bool failures_reported = false;
};

/// A joined node.
struct cluster_member {
  node_status status;
  caf::actor agent;
  caf::actor heartbeat;  ///< its heartbeat_monitor
  /// Its latest sign of life that passed the scheduler: join, keepalive or report.
  caf::actor_clock::time_point last_heard;
};

/// A running job.
struct job_record {
  job_master_actor master;           ///< its job_master
  std::vector<std::uint64_t> nodes;  ///< node ids by rank, held while the job runs
  job_status status;                 ///< as the job_master last told it
  saved_job saved;                   ///< what the store keeps of it
  std::vector<job_client_actor> clients;  ///< submitted or attached: a restart keeps them
};

/// A job that ran when the scheduler stopped, waiting for its nodes to join again.
struct resuming_job {
  saved_job saved;
  std::vector<job_client_actor> clients;  ///< attached meanwhile
};

/// A submission a restarted scheduler holds while its nodes join again (submit_reply once
/// placed, or refused as at once when they did not in time).
struct held_submission {
  job_submission job;
  job_client_actor client;
  caf::typed_response_promise<submit_reply> reply;
};

/// A scheduler's state.
struct scheduler_state {
  std::vector<cluster_member> members;
  std::uint64_t next_node_id = 1;
  std::uint64_t next_job_id = 1;
  std::uint64_t membership_epoch = 0;           ///< one more per join, loss or leave
  std::map<std::string, std::uint32_t> incarnations;  ///< joins so far, by node name
  std::map<std::uint64_t, job_record> jobs;     ///< running, by job id
  std::map<std::uint64_t, resuming_job> resuming;  ///< after a restart, by job id
  std::uint32_t restarts = 0;  ///< times this scheduler's record was taken up again
  /// Just restarted, its nodes joining again: submissions that need more nodes than joined
  /// are held (held_submission) until enough did or the wait ended.
  bool rejoining = false;
  std::vector<held_submission> held;
  std::vector<job_status> finished_jobs;
  std::map<std::uint64_t, job_finished> outcomes;  ///< by job id, for late attaches
  std::set<caf::actor_addr> children;  ///< linked heartbeat monitors and job masters running
  dropped_nodes dropped;  ///< lost nodes, told so when heard from again

  static inline const char* name = "strom.scheduler";
};

/// Handles: join_request -> join_reply; (submit_atom, job_submission) -> submit_reply (the
/// sender becomes a client of the job); (attach_atom, job_id) -> submit_reply; (cancel_atom,
/// job_id) -> submit_reply; status_atom -> cluster_status; (keepalive_atom, node_id) ->
/// keepalive_reply; node_progress, node_epoch_report, node_failure from nodes (a dropped
/// node's get (dropped_atom, reason) back); (node_hung_atom, node_id, reason) from heartbeat
/// monitors; job_status, job_checkpointed and job_finished from its job masters;
/// (rejoin_atom, job_id, 0) when a resuming job waited long enough for its nodes; rejoin_atom
/// alone when a restarted scheduler stops holding submissions for its nodes.
caf::behavior scheduler(caf::stateful_actor<scheduler_state>* self, scheduler_setup setup);

} // namespace strom::actors
