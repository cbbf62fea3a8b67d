#pragma once
// The node agent: the one actor per node that the scheduler knows and monitors. It joins the
// scheduler (and ends when refused, when the scheduler is lost, when the scheduler says it
// dropped the node, or when keepalives go unanswered for the reconnect timeout), answers
// heartbeats, and for each job it is given spawns the node's trainers and relay, starts their
// epochs, sums their reports for the scheduler and hands back the sharing counts at the end.
// Work that takes long (loading a job's data, evaluating after an epoch) runs on a thread of
// its own so heartbeats are answered meanwhile. A mesh job's relay edges are wired in
// node_wiring.cpp (both files share node_agent_steps.hpp).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/cluster/local_node.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/kvstore/parameter_shard.hpp"
#include "strom/actors/job/metrics_sink.hpp"
#include "strom/actors/worker/snapshot_transfer.hpp"
#include "strom/actors/pipeline/subnet.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// One job as this node trains it. The runtime prepares it (parses the job, loads the data,
/// builds the replicas) because actors never read files.
struct node_job {
  local_node_setup node;  ///< all but node_id and supervisor, which the agent sets
  std::string job_name;
  std::string mode = "shared";  ///< the training mode (node_ready::mode)
  std::string kvstore;          ///< kvstore mode's dist_sync or dist_async
  std::string device = "cpu";   ///< where the workers' steps run (node_ready::device)
  std::uint32_t epochs = 0;
  std::uint64_t batches_per_epoch = 0;  ///< over this node's workers
  std::uint64_t samples_per_epoch = 0;  ///< this node's share of the training set
  /// Evaluates (and checkpoints) the first replica after 0-based epoch `epoch`, while every
  /// trainer is idle; the job_master asks one node (the first one alive) each epoch.
  std::function<result<epoch_check>(compute::replica& trained, std::uint32_t epoch)> end_epoch;
  /// Direct connections to a kvstore job's server nodes, held while the job runs: pushes
  /// and answers then skip the hop through the scheduler.
  std::vector<std::shared_ptr<void>> server_links;
};

/// Told the first replica once the replicas are built, before the data loads.
using replicas_built = std::function<void(const compute::replica&)>;

/// Builds a node_job from an assignment (telling `built` once its replicas are), or says why
/// it cannot.
using node_job_factory =
  std::function<result<node_job>(const job_assignment&, const replicas_built& built)>;

/// Builds the parameter_shards of a server node's key ranges (parsing the job, initialising
/// the model's parameters), or says why it cannot.
using shard_factory =
  std::function<result<std::vector<parameter_shard_setup>>(const shard_assignment&)>;

/// Builds the subnet of a pipeline job's stage (parsing the job, building the stage's layers,
/// loading the data on the first stage), or says why it cannot.
using stage_factory = std::function<result<subnet_setup>(const stage_assignment&)>;

/// The actors a node serves a job with besides trainers: a kvstore job's shards on a server
/// node, or a pipeline job's subnet on a worker node.
struct served_job {
  std::uint64_t job_id = 0;
  std::vector<caf::actor> shards;
  std::shared_ptr<void> port;  ///< where the job's workers connect to the shards directly
  /// The node's pipeline stages: one, and a lost neighbour's merged in when no spare was left.
  std::vector<caf::actor> subnets;
  /// Connections to the servers of the shards' chain successors (--replicas), or to the nodes
  /// of a subnet's neighbouring stages, kept open.
  std::vector<std::shared_ptr<void>> chain_connections;
  /// Chain wirings whose connections are made aside, by chain version: the links to hand
  /// the shards once the connections (filled by the thread that makes them) are open.
  std::map<std::uint64_t, std::pair<std::vector<kv_chain_link>,
                                    std::shared_ptr<std::vector<std::shared_ptr<void>>>>>
    wiring;
  std::uint64_t stage_wirings = 0;  ///< a subnet's node's wirings so far (their keys above)
};

/// A node's relay published for its mesh neighbours: where, and the runtime object that keeps
/// the port open (held for the job's life; actors never open ports themselves).
struct published_relay {
  std::string endpoint;        ///< HOST:PORT on the node's advertised address
  std::shared_ptr<void> port;  ///< closes the port when the last holder lets go
};

/// Publishes a job's relay, or says why it cannot.
using relay_publisher = std::function<result<published_relay>(const caf::actor& relay)>;

/// A connection to a mesh neighbour's published relay.
struct relay_link {
  caf::actor remote;                 ///< the neighbour's relay
  std::shared_ptr<void> connection;  ///< carries the link while held
};

/// Connects to the relay published at HOST:PORT (blocking: the agent calls it aside).
using relay_connector = std::function<result<relay_link>(const std::string& endpoint)>;

/// What a node agent is built from.
struct node_agent_setup {
  agent_scheduler_actor scheduler;
  join_request identity;  ///< name, address, cores and workers to announce
  node_job_factory prepare;
  shard_factory serve;  ///< empty: the node holds no parameter shards (it is no server)
  stage_factory stage;  ///< empty: the node runs no pipeline stage (it is no worker)
  relay_publisher publish_relay;  ///< empty: the node publishes no relay (no network)
  relay_connector connect_relay;  ///< empty: the node cannot join a mesh
  caf::actor observer;  ///< optional: receives the scheduler's join_reply
  timing timeouts;  ///< its own, and its trainers' park_spin
  /// Told the node's figures with each progress report; null: nobody watches.
  std::shared_ptr<metrics_sink> metrics;
  /// Where its jobs' trainers and relays record what they do (--timeline); null: nowhere.
  std::shared_ptr<timeline_tracks> timeline;
  /// Its trainers' speed factor over the epochs (compute_slowdown.hpp, a testing aid).
  node_speed speed{};
  /// Set in a live simulation: its jobs' trainers tell it what they compute, and its relay
  /// reaches the hub through `reach_relay` (sim_seams.hpp).
  std::shared_ptr<compute_meter> meter{};
  relay_reach reach_relay{};
  /// Set where one caller reports a job's failure to its user (an in-process cluster's
  /// command): a job the node cannot prepare is logged at debug (the failure names why).
  bool failures_reported = false;
};

/// The job a node trains now.
struct node_job_run {
  std::uint64_t job_id = 0;
  std::uint32_t rank = 0;
  std::shared_ptr<node_job> job;
  local_node actors;
  std::uint32_t round = 0;
  epoch_totals totals;            ///< this round so far
  epoch_totals job_totals;        ///< every round so far (for metrics)
  std::vector<std::uint64_t> steps;   ///< by worker slot: batches of the round, once done
  std::uint32_t epochs_reported = 0;  ///< trainers done with the round's samples
  std::uint32_t drained = 0;          ///< trainers that applied every frame of the round
  drain_report drains;                ///< summed over the trainers
  std::uint64_t iteration = 0;        ///< first replica's updater steps
  caf::actor_clock::time_point round_started;
  caf::actor_clock::time_point progress_sent;
  std::uint64_t relay_bytes_received = 0;  ///< the relay's count as it last answered
  std::shared_ptr<void> relay_port;  ///< keeps the relay published for mesh neighbours
  std::vector<std::shared_ptr<void>> relay_links;  ///< connections to mesh neighbours
  std::uint64_t topology_version = 0;  ///< of the newest topology_update wired
  /// The kvstore servers' endpoints it connected to (at the start, then new heads'), and the
  /// connections made after the start, each filled by a helper thread and only read when let go.
  std::set<std::string> servers_reached;
  std::vector<std::shared_ptr<std::vector<std::shared_ptr<void>>>> later_server_links;
};

/// A restore asked for while the job is still prepared (a joiner takes its snapshot beside
/// loading its data): fetched once the replicas are built, taken by the trainers once they run.
struct early_restore {
  caf::actor source;
  caf::response_promise promise;  ///< in `incoming` instead while the chunks arrive
  std::optional<compute::frame> snapshot;  ///< whole, awaiting the trainers
  snapshot_sent sent;
};

/// A topology_update that came while another was wired, with the promise that answers it.
struct queued_update {
  topology_update update;
  caf::response_promise promise;
};

/// A node agent's state.
struct node_agent_state {
  std::uint64_t node_id = 0;  ///< 0 until the scheduler accepted the join
  std::optional<node_job_run> run;
  std::optional<served_job> served;  ///< a server node's shards of the job it serves
  /// Relays of stopped jobs still reporting their counts: ended once they answered, or when
  /// the agent ends first (its actor system waits for every actor when destroyed).
  std::vector<caf::actor> reporting_relays;
  std::optional<caf::response_promise> pending_ready;  ///< the assignment being prepared
  std::uint64_t pending_job_id = 0;                    ///< its job
  caf::actor_clock::time_point last_answer;  ///< the scheduler's latest keepalive answer
  /// Filled by the thread that prepares the assignment, read once its prepared_atom arrives.
  std::shared_ptr<std::optional<result<node_job>>> prepared;
  std::shared_ptr<std::optional<result<epoch_check>>> checked;  ///< likewise for end_epoch
  std::optional<caf::response_promise> pending_check;  ///< the evaluation being run
  std::optional<snapshot_receipt> incoming;  ///< a peer's snapshot arriving
  /// While an assignment is prepared: the bound of a snapshot its replicas take, once they are
  /// built (0 before), and a restore asked for meanwhile.
  std::size_t prepared_bound = 0;
  std::optional<early_restore> early;
  std::shared_ptr<std::optional<result<relay_link>>> wiring;  ///< likewise for a mesh link
  std::optional<caf::response_promise> pending_wire;  ///< the topology_update being wired
  topology_update wiring_update;  ///< that update (its resend, its version)
  /// The newest update that came meanwhile, wired next; an older one is never wired.
  std::optional<queued_update> next_wire;
  /// Updates a newer one replaced: answered as wired once no update waits to be wired.
  std::vector<caf::response_promise> superseded_wires;

  static inline const char* name = "strom.node_agent";
};

/// Handles: ping_atom -> pong_atom; job_assignment -> node_ready (error when it cannot be
/// prepared); round_plan (each trainer its round_work; a plan that does not fit the node is
/// reported as a node_failure); (forget_atom, job_id, origin) and (cut_atom, job_id, round)
/// passed to the trainers;
/// (evaluate_atom, job_id, epoch) -> epoch_check; (snapshot_atom, job_id, receiver) ->
/// snapshot_sent (its first trainer's snapshot, as chunks to `receiver`); (restore_atom,
/// job_id, source) -> snapshot_sent (a joining node: `source`'s snapshot into every trainer,
/// chunks arriving as snapshot_chunk; asked while the job is still prepared, the snapshot is
/// fetched once the replicas are built, beside the data loading, and answered once the
/// trainers run and took it); step_report, epoch_report, drain_report from
/// its trainers; (stall_atom, job_id) -> node_activity (each trainer's worker_activity, for the
/// stall watch); (stop_atom, job_id) -> node_sharing_report (also for a job still being
/// prepared, which is then dropped); topology_update -> wired_atom once the node's relay
/// and its mesh parent's are peers of each other (one update at a time: of those that come
/// meanwhile only the newest version is wired next, the others, and any not newer than the
/// one wired, are answered wired_atom unapplied, once no update waits to be wired);
/// (dropped_atom, reason) from the scheduler; stage_assignment -> stage_ready (its subnet,
/// a pipeline job's stage, stopped like shards by (stop_atom, job_id)).
/// Sends
/// (keepalive_atom, node_id) every keepalive_interval once joined. Quits with an error when
/// the join is refused or unanswered, the scheduler goes down, says the node was dropped, or
/// answers no keepalive for reconnect_timeout; its job's actors stop first.
caf::behavior node_agent(caf::stateful_actor<node_agent_state>* self, node_agent_setup setup);

} // namespace strom::actors
