#pragma once
// The scheduler: the master of a cluster. It admits nodes (join with a protocol check, one
// name per node), watches them (their node_agent's down message for a crash, a
// heartbeat_monitor each for a hang), runs one job at a time over the joined nodes (ranks,
// global worker ranks for the data partitions, the plain topology's hub relay that passes
// every node's frames to all others), paces its epochs, sums progress for clients and ends
// the job with one report. A lost node fails the running job with a message naming it.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/dropped_nodes.hpp"
#include "strom/actors/messages.hpp"

namespace strom::actors {

/// Timeouts of a scheduler; every request it makes has one.
struct scheduler_setup {
  caf::timespan heartbeat_interval = std::chrono::seconds(1);
  caf::timespan heartbeat_timeout = std::chrono::seconds(10);
  /// Time a node may take to load a job's data and build its replicas.
  caf::timespan prepare_timeout = std::chrono::minutes(5);
  /// Time a node may take to answer a request that needs no work (stop, stats).
  caf::timespan answer_timeout = std::chrono::seconds(10);
  /// A running job whose nodes report nothing for this long fails.
  caf::timespan silence_limit = std::chrono::minutes(5);
  /// Non-empty: only nodes whose join_request carries this token join (an in-process
  /// cluster's own nodes). Empty: any node that speaks the protocol joins.
  std::string admission_token;
};

/// A joined node.
struct cluster_member {
  node_status status;
  caf::actor agent;
  caf::actor heartbeat;  ///< its heartbeat_monitor
};

/// The job being trained.
struct running_job {
  job_status status;
  job_submission submission;
  std::vector<std::uint64_t> nodes;  ///< node ids by rank
  std::vector<caf::actor> clients;   ///< told progress, epochs and the end
  caf::actor hub;  ///< the plain topology's master relay; fresh per job (sequences restart)
  std::uint32_t ready = 0;           ///< nodes whose actors run
  std::uint64_t batches_per_epoch = 0;
  std::uint64_t samples_per_epoch = 0;
  std::map<std::uint64_t, node_progress> progress;           ///< latest, by node, this epoch
  std::map<std::uint64_t, node_epoch_report> epoch_reports;  ///< this epoch, by node
  std::map<std::uint64_t, node_sharing_report> sharing;      ///< at the end, by node
  training_report report;
  caf::actor_clock::time_point submitted;
  caf::actor_clock::time_point epoch_started;
  caf::actor_clock::time_point last_heard;  ///< the latest message from any of its nodes
};

/// A scheduler's state.
struct scheduler_state {
  std::vector<cluster_member> members;
  std::uint64_t next_node_id = 1;
  std::uint64_t next_job_id = 1;
  std::optional<running_job> job;
  std::vector<job_status> finished_jobs;
  std::map<std::uint64_t, job_finished> outcomes;  ///< by job id, for late attaches
  std::set<caf::actor_addr> children;  ///< linked heartbeat monitors and hubs still running
  dropped_nodes dropped;  ///< lost nodes, told so when heard from again

  static inline const char* name = "strom.scheduler";
};

/// Handles: join_request -> join_reply; (submit_atom, job_submission) -> submit_reply (the
/// sender becomes a client of the job); (attach_atom, job_id) -> submit_reply; (cancel_atom,
/// job_id) -> submit_reply; status_atom -> cluster_status; (keepalive_atom, node_id) ->
/// keepalive_reply; node_progress, node_epoch_report, node_failure from nodes (a dropped
/// node's get (dropped_atom, reason) back); (node_hung_atom, node_id, reason) from heartbeat
/// monitors.
caf::behavior scheduler(caf::stateful_actor<scheduler_state>* self, scheduler_setup setup);

} // namespace strom::actors
