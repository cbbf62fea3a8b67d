#pragma once
// Every message strom's actors exchange, in ONE type-ID block: two nodes can only talk when
// they agree on it (shared/CAF-0.17-NOTES.md, "Message types"). Bulk data travels in
// ref-counted buffers that local sends share and remote sends serialise once.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/progress.hpp"
#include "strom/actors/training_report.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

/// A Cap'n Proto update frame as a message: local sends share the immutable buffer, a remote
/// send writes its bytes once and the receiver reads them in place.
struct shared_frame {
  compute::frame value;  ///< the frame (stream header word + one segment)
};

/// One piece of a trainer's snapshot (compute/snapshots/snapshot_chunks.hpp): a SnapshotChunk
/// frame of at most compute::max_snapshot_chunk_bytes, carried like shared_frame.
struct snapshot_chunk {
  compute::frame value;  ///< the frame (stream header word + one segment)
};

/// A whole encoded snapshot, assembled from its chunks: a node agent hands it to its own
/// trainers (a local message; a remote one could carry at most compute::max_frame_bytes).
struct assembled_snapshot {
  compute::frame value;  ///< the encoded words
};

/// trainer -> the requester of (snapshot_atom, receiver): the chunks went to the receiver.
struct snapshot_sent {
  std::uint64_t snapshot_id = 0;
  std::uint32_t chunks = 0;
  std::uint64_t bytes = 0;  ///< of the encoded snapshot
};

/// What one trainer trains in one round. A round is an epoch's pass over the training set by
/// the job's current nodes, or a makeup pass over the share a lost node left untrained; frames,
/// clocks and drain markers count rounds (in their `epoch` fields), the data order counts
/// epochs.
struct round_work {
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;   ///< 0-based data epoch: seeds the order of a partition
  std::uint32_t rank = 0;    ///< partition `rank` of `ranks`, in the epoch's order
  std::uint32_t ranks = 1;   ///< 0: a makeup pass over `indices` instead
  std::vector<std::uint32_t> indices;  ///< a makeup pass: these samples, in this order
  std::vector<std::uint64_t> origins;  ///< the nodes whose frames and drains the round waits for
  /// Steps every worker of the round takes (the fewest of any): parameter averaging averages
  /// up to there, so every worker contributes to the same averages.
  std::uint64_t common_steps = 0;
  /// Steps the round's busiest worker takes (the most of any): a dist_sync kvstore node whose
  /// workers all ran out of batches sooner joins the later steps (kv_push of weight 0).
  std::uint64_t most_steps = 0;
};

/// job_master -> node_agent: the node's trainers' work for the next round, by worker slot.
struct round_plan {
  std::uint64_t job_id = 0;
  std::uint32_t round = 0;
  std::vector<round_work> workers;
};

/// A relay's count of one origin's frames in that origin's latest round: the answer to
/// (forget_atom, origin), after which the relay drops the origin's frames. Frames a relay
/// counted went on to every peer, so in the plain topology the hub's count is what every
/// surviving node applies.
struct origin_frames {
  std::uint64_t origin = 0;
  std::uint32_t round = 0;
  std::vector<std::uint64_t> frames;  ///< by worker slot, in `round`
  bool drained = false;               ///< the origin's drain marker of `round` passed
};

/// Progress of one trainer since its previous step_report (of the same epoch).
struct step_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;    ///< 0-based
  std::uint64_t batches = 0;  ///< steps since the previous report
  double loss_sum = 0.0;      ///< sum of their batches' mean losses
  std::uint64_t samples = 0;  ///< samples in their batches
};

/// A trainer went through its whole partition for one epoch.
struct epoch_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;     ///< 0-based
  double loss_sum = 0.0;       ///< sum of the batches' mean losses
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint64_t iteration = 0; ///< the replica's updater steps after the epoch
};

/// A trainer applied every frame of an epoch (the drain marker reached it).
struct drain_report {
  std::uint32_t worker = 0;
  std::uint32_t epoch = 0;                      ///< 0-based
  std::uint64_t updates_applied = 0;            ///< frames applied so far, in total
  std::uint64_t duplicate_updates_applied = 0;  ///< frames seen twice (must stay 0)
  std::uint64_t frames_rejected = 0;            ///< frames that did not fit the replica
};

/// Travels behind the last frame of a node's epoch, from its last trainer to finish to the
/// other trainers and through the relays: mailboxes are FIFO per sender and every frame of
/// the node was sent before it, so a trainer that sees it has applied every frame before it.
struct drain_marker {
  std::uint64_t origin = 0;  ///< node whose workers all framed their last update of the epoch
  std::uint32_t epoch = 0;   ///< 0-based
};

/// What a node framed so far (node_framer).
struct framing_stats {
  std::uint64_t updates = 0;         ///< worker updates framed (one frame each)
  std::uint64_t frames_sent = 0;     ///< of them, frames that carried something
  std::uint64_t bytes_sent = 0;      ///< frame bytes
  std::uint64_t dense_bytes_equivalent = 0;  ///< 4 bytes per element per update
  double density_sum = 0.0;          ///< sum of each update's values sent / elements
  float threshold = 0.0f;            ///< the threshold of the latest update
  std::uint64_t averages = 0;          ///< parameter averages the node's workers took part in
  std::uint64_t push_bytes = 0;        ///< kvstore: frame bytes pushed to the shards
  std::uint64_t push_dense_bytes = 0;  ///< kvstore: what fp32 pushes would have been
  std::uint64_t pull_bytes = 0;        ///< kvstore: frame bytes of the shards' answers
  std::vector<tensor_sharing> tensors; ///< each tensor's sharing, over the node's workers
};

/// What a relay saw so far.
struct relay_stats {
  std::uint64_t frames_forwarded = 0;  ///< new frames handed on
  std::uint64_t duplicates_dropped = 0;
  std::uint64_t frames_rejected = 0;   ///< frames that failed to read
  std::uint64_t bytes_received = 0;    ///< frame bytes that came from peer relays
  std::uint64_t averaging_bytes = 0;   ///< frame bytes of average sums sent to peer relays
};

// -- parameter averaging along the tree (average_reduction.hpp) ----------------------------

/// Elements of a contribution [weight, parameters, updater state] one sum or total carries at
/// most (1 MiB): a whole model goes as segments, which the tree reduces one by one, so that the
/// transfers of one overlap the adding of another.
inline constexpr std::size_t average_segment_elements = std::size_t{1} << 18;

/// A segment of a sum of contributions to one parameter average on its way up the tree: a
/// trainer's node's sum (published to its relay) or a relay's partial sum of its subtree (sent
/// to its parent). `sum` is a dense fp32 frame whose header names the node that summed it
/// (origin_node), the round (epoch), the average (sequence) and the segment's first element of
/// the contribution (offset).
struct average_part {
  std::uint32_t round = 0;
  std::uint64_t index = 0;    ///< the round's index-th average
  std::uint64_t attempt = 0;  ///< the tree version it was summed along (0: a node's own sum)
  std::vector<std::uint64_t> members;  ///< the round's nodes (round_work::origins)
  shared_frame sum;
};

/// A segment of the complete sum of one average (the root's), flooded to every node and its
/// trainers.
struct average_total {
  std::uint32_t round = 0;
  std::uint64_t index = 0;
  shared_frame sum;
};

/// job_master -> relay: the tree averages are reduced along, as the relay of `node` sees it.
/// Each version replaces the one before; the averages open then start again along it.
struct average_tree {
  std::uint64_t version = 0;
  std::uint64_t node = 0;  ///< the receiving relay's node
  std::uint64_t root = 0;
  std::vector<std::uint64_t> nodes;    ///< every node of the tree
  std::vector<std::uint64_t> parents;  ///< of nodes[i]; 0 for the root
};

// -- parameter servers (kvstore mode, parameter_shard.hpp) ----------------------------------

/// A worker's name towards the parameter shards: its node and slot (kv_worker_id).
using kv_worker = std::uint64_t;

/// The kv_worker of slot `slot` on node `node`.
constexpr kv_worker kv_worker_id(std::uint64_t node, std::uint32_t slot) noexcept {
  return (node << 16) | (slot & 0xffffu);
}

/// The node of a kv_worker.
constexpr std::uint64_t kv_node_of(kv_worker worker) noexcept { return worker >> 16; }

/// The worker slot of a kv_worker.
constexpr std::uint32_t kv_slot_of(kv_worker worker) noexcept {
  return static_cast<std::uint32_t>(worker & 0xffffu);
}

/// Most worker gradients one push may stand for: the worker slots of a node.
inline constexpr std::uint32_t max_kv_push_weight = 0x10000;

/// worker -> parameter_shard: the worker's gradient of one step over the shard's range, an
/// update frame (dense fp32, 2-bit or threshold) at offset 0 of the range; answered with
/// kv_values once the shard merged the step (dist_sync) or applied the push (dist_async).
/// A node's workers push once, as its first worker: the mean of `weight` gradients (MXNet's
/// local aggregation), which a dist_sync step weighs by `weight`.
struct kv_push {
  kv_worker worker = 0;
  std::uint32_t round = 0;
  std::uint64_t step = 0;  ///< 1-based within the round
  compute::frame gradient;
  /// Gradients averaged in `gradient`, 1..max_kv_push_weight; 0 (dist_sync): a join, with no
  /// gradient, from a node out of batches that takes the step's answer (Horovod's join)
  std::uint32_t weight = 1;
};

/// parameter_shard -> worker: the range's parameters after the step (a dense fp32 frame), or
/// the merged gradient when the shard only sums (serverOptimizer false).
struct kv_values {
  compute::frame values;
};

/// job_master -> parameter_shard: the workers that train round `round` (of data epoch
/// `epoch`): a dist_sync step waits for each of them until it pushed or said kv_done.
struct kv_round {
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;
  std::vector<kv_worker> workers;
};

/// worker -> parameter_shard: the worker trained its part of `round` in `steps` steps. Also
/// from a trainer to its node's first trainer, which pushes for the node (kv_local_step).
struct kv_done {
  kv_worker worker = 0;
  std::uint32_t round = 0;
  std::uint64_t steps = 0;
};

/// trainer -> its node's first trainer, which pushes for the node (local aggregation): slot
/// `slot` added its gradient of step `step` of `round` to the node's sum (kv_node_sum).
struct kv_local_step {
  std::uint32_t round = 0;
  std::uint32_t slot = 0;
  std::uint64_t step = 0;
};

/// The node's first trainer -> each other trainer of the node: range `range`'s answer to
/// node push `step` of `round` (kv_values), whether the push carried its gradient or not.
struct kv_local_answer {
  std::uint32_t round = 0;
  std::uint64_t step = 0;
  std::uint32_t range = 0;
  compute::frame values;
};

/// A key range (compute::key_range) and the parameter_shard that holds it, as it travels.
struct kv_shard_entry {
  std::uint32_t key = 0;
  std::uint32_t part = 0;
  std::uint32_t server = 0;  ///< the range's first server (its place in key_layout)
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  caf::actor shard;
  std::uint32_t position = 0;  ///< in the range's chain of replicas: 0 is the head
  std::uint64_t holder = 0;    ///< the server node the shard lives on
};

/// job_master -> node_agent of a server node: hold the key ranges of server `server` (of
/// `servers`) of a kvstore job, and with `replicas` > 1 a replica of the ranges of the
/// `replicas` - 1 servers before it; answered with shards_ready.
struct shard_assignment {
  std::uint64_t job_id = 0;
  std::string job_text;
  std::string source;
  std::uint32_t server = 0;
  std::uint32_t servers = 1;
  std::uint32_t replicas = 1;
  /// A server that joins a running job holds exactly these ranges, at the positions named
  /// (the end of their chains); empty: the ranges of `server` as above.
  std::vector<kv_shard_entry> ranges{};
};

// -- chain replication of key ranges (--replicas R, parameter_shard.hpp) ---------------------

/// node_agent -> parameter_shard: the shard's successor in its range's chain (null: it is the
/// tail) as of chain configuration `version`; a link older than the shard's is ignored.
struct kv_chain_link {
  std::uint64_t version = 0;
  caf::actor shard;
  caf::actor successor;
};

/// job_master -> node_agent of a server node: the chain links of its shards for a job, after
/// it connected to `endpoints` (the successors' servers) so chain traffic does not pass
/// through the scheduler; answered with wired_atom.
struct chain_wiring {
  std::uint64_t job_id = 0;
  std::vector<kv_chain_link> links;  ///< none for a pipeline stage's node: it only connects
  std::vector<std::string> endpoints;
};

/// parameter_shard -> its successor: one step its range committed (the merged mean of a
/// dist_sync step, or one dist_async push), which the successor commits the same way; answered
/// with `seq` once committed down the rest of the chain.
struct kv_chain_step {
  std::uint64_t version = 0;  ///< the sender's chain configuration
  std::uint64_t seq = 0;      ///< the range's commits so far, this one included
  std::uint32_t round = 0;
  std::uint32_t epoch = 0;
  std::uint64_t step = 0;
  std::vector<kv_worker> workers;  ///< whose push of `step` the commit holds
  compute::frame mean;             ///< the gradient committed, dense fp32
};

/// A dist_sync round's plan and progress as a shard holds it (its pending pushes aside).
struct kv_round_record {
  std::uint32_t round = 0;
  bool planned = false;  ///< kv_round arrived: `workers` and `epoch` are known
  std::uint32_t epoch = 0;
  std::vector<kv_worker> workers;
  std::map<kv_worker, std::uint64_t> done;    ///< steps of the workers that finished
  std::map<kv_worker, std::uint64_t> latest;  ///< each worker's latest step committed
};

/// parameter_shard -> a new successor: everything the shard committed, which the successor
/// takes in place of its own (round plans merged with what it holds); answered with `seq`.
struct kv_shard_state {
  std::uint64_t version = 0;
  std::uint64_t seq = 0;
  std::uint64_t iteration = 0;
  std::uint32_t epoch = 0;
  std::vector<kv_round_record> rounds;
  std::vector<std::uint32_t> closed;
  std::vector<std::uint64_t> lost_nodes;
  compute::frame parameters;        ///< dense fp32
  compute::frame updater_state;     ///< dense fp32
  compute::frame latest;            ///< the latest answer
};

/// job_master -> node_agent -> trainers: key ranges whose head changed (its server was lost);
/// later pushes, an unanswered one and a finished round's kv_done go to the new head. The
/// node connects to the new heads' server nodes at `endpoints` that it does not reach yet (a
/// server that joined after the job started), so pushes skip the hop through the scheduler.
struct kv_reroute {
  std::uint64_t job_id = 0;
  std::vector<kv_shard_entry> heads;
  std::vector<std::string> endpoints{};
};

/// node_agent -> job_master: the parameter_shards a server node spawned for a job.
struct shards_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::vector<kv_shard_entry> shards;
  /// HOST:PORT where the workers connect to reach the shards directly (not through the
  /// scheduler); empty where the node publishes no port (a lone in-process node).
  std::string endpoint{};
};

/// What a parameter_shard counted.
struct shard_stats {
  std::uint64_t updates = 0;     ///< optimizer steps (merged steps in dist_sync, pushes in
                                 ///< dist_async)
  std::uint64_t pushes = 0;      ///< pushes taken
  std::uint64_t duplicates = 0;  ///< pushes seen before, not applied again
  std::uint64_t rejected = 0;    ///< pushes that did not fit the range
  std::uint64_t push_bytes = 0;  ///< frame bytes of the pushes taken
  std::uint64_t pull_bytes = 0;  ///< frame bytes of the answers (one frame a step, shared)
};

// -- cluster protocol ------------------------------------------------------------------------

/// Bumped whenever a message of this header changes: nodes of different versions refuse to
/// join instead of misreading each other.
inline constexpr std::uint32_t protocol_version = 22;

/// A node that trains (the default).
inline constexpr const char* node_role_worker = "worker";
/// A node that holds parameter shards for kvstore jobs (strom node --role server).
inline constexpr const char* node_role_server = "server";

/// node_agent -> scheduler: asks to join (the sender is the agent the scheduler monitors).
struct join_request {
  std::uint32_t version = protocol_version;
  std::string name;           ///< unique in the cluster (default: host:pid)
  std::string address;        ///< the address the node advertises
  std::uint32_t cores = 1;
  std::uint32_t workers = 1;  ///< trainer slots the node offers
  /// What a scheduler that admits only its own nodes asks for (scheduler_setup); empty
  /// elsewhere.
  std::string admission_token;
  std::string role = node_role_worker;  ///< node_role_worker or node_role_server
  /// Bytes strom may place on the node (--memory-limit); 0: no limit set.
  std::uint64_t memory_limit = 0;
  /// Its speed factor (--speed-factor, compute_slowdown.hpp): how a pipeline job's stages
  /// are placed on it (pipeline mode, issue #20).
  double speed_factor = 1.0;
  /// Floating-point operations a second it measured before joining (compute/partition/
  /// speed_probe.hpp), its speed factor applied; 0: not measured.
  double compute_rate = 0.0;
};

/// scheduler -> node_agent: the answer to a join_request.
struct join_reply {
  bool accepted = false;
  std::uint64_t node_id = 0;  ///< the node's id in the cluster (origin of its frames)
  std::string reason;         ///< why the join was refused
};

/// client -> scheduler: a job to run. The job travels as Cap'n Proto text with absolute data
/// paths: every node reads the data at the same paths.
struct job_submission {
  std::string job_text;
  std::string source;          ///< where the job came from, for messages
  std::string checkpoint_dir;  ///< on the first node; empty: no checkpoint
  std::uint32_t nodes = 0;     ///< nodes required; 0: every node that has joined
  /// Below this many live nodes the job pauses for nodes to join (0 counts as 1).
  std::uint32_t min_nodes = 0;
  /// The job grows to nodes that join while it runs up to this many; 0: `nodes` when set,
  /// else no bound.
  std::uint32_t max_nodes = 0;
  /// How long a paused job waits for nodes to join before it fails; 0: the default.
  std::uint64_t rejoin_timeout_ms = 0;
  std::string topology = "plain";  ///< "plain", "mesh" or "auto" (topology.hpp)
  std::uint32_t fanout = 8;        ///< children a mesh node has at most, 1..max_fanout
  /// A kvstore job: it also takes server nodes, `servers` of them (0: every free one).
  bool kvstore = false;
  std::uint32_t servers = 0;
  std::uint32_t replicas = 1;  ///< servers that hold each key range (chain replication)
  /// A pipeline job (distributed.mode pipeline): its worker nodes run its stages.
  bool pipeline = false;
  /// A parameter-averaging job: its nodes' relays form a tree whatever `topology` says.
  bool averaging = false;
};

/// scheduler -> client: the answer to a job_submission, an attach or a cancel.
struct submit_reply {
  bool accepted = false;
  std::uint64_t job_id = 0;
  std::string reason;  ///< why the request was refused
};

/// scheduler -> node_agent: train a job as one of its nodes.
struct job_assignment {
  std::uint64_t job_id = 0;
  std::string job_text;
  std::string source;
  std::string checkpoint_dir;  ///< set for rank 0 only
  std::uint32_t rank = 0;      ///< this node's index among the job's nodes
  std::uint32_t workers = 1;   ///< trainers this node runs
  std::uint32_t first_worker = 0;   ///< global rank of the node's first worker
  std::uint32_t total_workers = 1;  ///< workers over all nodes (data partitions)
  std::vector<std::uint64_t> origins;  ///< node ids of every node that sends frames
  caf::actor hub;  ///< the relay every node sends its frames to (plain); null in a mesh
  std::vector<kv_shard_entry> shards;  ///< a kvstore job's key ranges and their shards
  std::vector<std::string> server_endpoints;  ///< where to connect to the servers directly
};

/// node_agent -> scheduler: the job's actors run and wait for the first epoch.
struct node_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  caf::actor relay;  ///< the node's relay, a peer of the hub
  std::string job_name;
  std::uint32_t epochs = 0;
  std::uint64_t batches_per_epoch = 0;  ///< over the node's workers
  std::uint64_t samples_per_epoch = 0;  ///< the node's share of the training set
  // What the job_master needs to assign the data: every node has the same.
  std::uint64_t train_samples = 0;  ///< samples in the training set
  std::uint32_t batch_size = 1;
  std::uint32_t workers = 1;        ///< trainers on the node
  std::uint64_t seed = 0;           ///< the job seed (epoch orders)
  bool shuffle = true;
  /// HOST:PORT where the node's relay is published for its mesh neighbours (the node's
  /// advertised address); empty where the node publishes none (a lone in-process node).
  std::string relay_endpoint{};
  std::uint32_t averaging_frequency = 0;  ///< parameter averaging's; 0: updates are shared
  std::string mode = "shared";            ///< the job's training mode
  std::string kvstore{};                  ///< kvstore mode's "dist_sync" or "dist_async"
};

/// job_master -> node_agent of a mesh job's non-root node, before the first epoch, when the
/// node joins, or when its parent was lost: connect your relay to your parent's (both add the
/// other as a peer), then answer wired_atom.
struct topology_update {
  std::uint64_t job_id = 0;
  std::uint64_t version = 0;         ///< of the job's topology_plan
  std::uint64_t parent = 0;          ///< the parent's node id
  std::string parent_endpoint;       ///< HOST:PORT of the parent's relay (node_ready)
  /// A repair after a loss: both relays first send each other what they kept of the round
  /// (relay.hpp).
  bool resend = false;
};

/// node_agent -> job_master: the answer to (evaluate_atom, job_id, epoch), what the node did
/// with its first replica after the epoch while its trainers were idle.
struct epoch_check {
  test_result tested;      ///< accuracy -1 without a test set
  std::string checkpoint;  ///< where the model was saved, empty if nowhere
};

/// node_agent -> scheduler: the job cannot go on on this node.
struct node_failure {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::string message;
};

/// node_agent -> scheduler, a few times a second: training progress in the current epoch.
struct node_progress {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::uint32_t round = 0;
  std::uint64_t batches = 0;   ///< this round so far, all the node's workers
  std::uint64_t samples = 0;
  double loss_sum = 0.0;
  std::uint64_t job_samples = 0;  ///< every round of the job so far
  framing_stats sent;             ///< what the node framed in the job so far
  /// Frame bytes its relay took from peers in the job, as of the relay's last count.
  std::uint64_t bytes_received = 0;
};

/// trainer -> the requester of stall_atom: what the worker does in its round, for the stall
/// watch (stall_watch.hpp).
struct worker_activity {
  std::uint32_t worker = 0;
  std::uint32_t round = 0;
  std::uint64_t steps = 0;   ///< steps taken in the round
  bool answered = true;      ///< false: the worker did not answer in time (busy in a step)
  bool waiting = false;      ///< parked: the staleness bound or an average holds its next step
  bool finished = false;     ///< trained its share of the round, waits for the drains
  /// Origins (node ids) whose frames or drain marker it waits for.
  std::vector<std::uint64_t> waiting_for;
};

/// node_agent -> job_master: the answer to (stall_atom, job_id), its workers' activity.
struct node_activity {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::vector<worker_activity> workers;  ///< by worker slot
};

/// node_agent -> scheduler: the node trained and drained a round.
struct node_epoch_report {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  std::uint32_t round = 0;
  epoch_totals totals;          ///< summed over the node's workers
  std::vector<std::uint64_t> steps;  ///< by worker slot: batches trained (fewer after a cut)
  std::uint64_t iteration = 0;  ///< updater steps of the node's first replica
  drain_report drained;         ///< frames applied so far, summed over the node's workers
};

/// node_agent -> scheduler at the end of a job: what the node's sharing actors counted.
struct node_sharing_report {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  framing_stats sent;
  relay_stats relayed;
};

/// scheduler -> clients: progress of a job.
struct job_progress {
  std::uint64_t job_id = 0;
  step_progress progress;
  cluster_figures cluster;  ///< its nodes' figures and membership changes so far
};

/// scheduler -> clients: a job finished an epoch.
struct job_epoch {
  std::uint64_t job_id = 0;
  epoch_summary summary;
};

/// scheduler -> clients: a job ended.
struct job_finished {
  std::uint64_t job_id = 0;
  bool succeeded = false;
  bool cancelled = false;  ///< ended by a cancel request (then not succeeded)
  std::string failure;     ///< why it failed or who cancelled it
  training_report report;
};

/// job_master -> scheduler: the job's checkpoint after `epochs_done` epochs is saved; the
/// scheduler keeps this with the job (scheduler_store.hpp).
struct job_checkpointed {
  std::uint64_t job_id = 0;
  std::uint32_t epochs_done = 0;
  training_report report;
};

/// scheduler -> node_agent: the answer to (keepalive_atom, node_id).
struct keepalive_reply {
  bool dropped = false;  ///< the scheduler no longer counts the node as a member
  std::string reason;    ///< why it was dropped
};

/// One node as the scheduler sees it.
struct node_status {
  std::uint64_t node_id = 0;
  std::string name;
  std::string address;
  std::uint32_t cores = 0;
  std::uint32_t workers = 0;
  /// How many times a node of this name has joined: 1 at the first join, one more each time
  /// it joins again after it left or was lost.
  std::uint32_t incarnation = 1;
  std::string role = node_role_worker;  ///< what the node joined as
  std::uint64_t memory_limit = 0;       ///< bytes strom may place there; 0: no limit set
  double speed_factor = 1.0;            ///< its announced speed factor (join_request)
  double compute_rate = 0.0;            ///< its measured compute rate (join_request)
};

/// "node 3 (w2 at 10.0.0.2)": how logs and failures name a node.
std::string describe(const node_status& node);

/// One job as the scheduler sees it.
struct job_status {
  std::uint64_t job_id = 0;
  std::string name;
  std::string state;  ///< "preparing", "training", "succeeded", "failed", "cancelled"
  std::uint32_t epoch = 0;    ///< epochs finished
  std::uint32_t epochs = 0;
  std::string failure;
  double test_accuracy = -1.0;
  /// A mesh job's tree, each parent and its children ("mesh, fanout 2: 1 > 2 3; 2 > 4");
  /// empty for plain.
  std::string topology;
  std::uint32_t nodes = 0;           ///< live nodes training it
  std::uint32_t nodes_lost = 0;      ///< while it ran
  std::uint32_t nodes_restored = 0;
  std::uint32_t nodes_joined = 0;
  /// Set while the job's steps wait longer than the stall warning: whom they wait for, what
  /// it last did and for how long (stall_watch.hpp); empty otherwise.
  std::string stall;
};

/// scheduler -> (status_atom) requester.
struct cluster_status {
  std::vector<node_status> nodes;
  std::vector<job_status> jobs;
  std::uint64_t membership_epoch = 0;  ///< grows by one with every join, loss or leave
};

/// scheduler -> job_master: a node of the job left the cluster (lost or dropped).
struct member_lost {
  std::uint64_t node_id = 0;
  std::uint64_t membership_epoch = 0;  ///< the scheduler's epoch after the loss
  caf::error reason;                   ///< a strom_error (node_lost) with the words to show
  /// Seconds from the node's last sign of life (heartbeat answer or keepalive) to the loss.
  double silent_seconds = 0.0;
};

/// scheduler -> job_master (request, answered with whether the job takes it): a node joined
/// the cluster while the job runs and no other job holds it.
struct member_joined {
  node_status node;
  caf::actor agent;
  std::uint64_t membership_epoch = 0;  ///< the scheduler's epoch after the join
};

// -- inspection (CAF 0.17 syntax) ------------------------------------------------------------

namespace detail {

/// True for CAF's binary serializer and deserializer (not the to_string inspector).
template <class F>
inline constexpr bool is_binary_inspector = std::is_same_v<typename F::result_type, caf::error>;

/// Loads a frame after checking the announced length (at most `max_bytes`) before allocating;
/// no bytes at all make an empty frame where `may_be_empty`.
caf::error load_frame(caf::deserializer& source, compute::frame& target,
                      std::size_t max_bytes = compute::max_frame_bytes,
                      bool may_be_empty = false);
/// Writes a frame as one length-prefixed byte sequence.
caf::error save_frame(caf::serializer& sink, const compute::frame& value);

/// A frame-carrying message: its size for to_string, its bytes on the wire, at most
/// `max_bytes` of them accepted when loading (or none, where `may_be_empty`).
template <class F>
typename F::result_type inspect_frame(F& f, const char* name, compute::frame& value,
                                      std::size_t max_bytes, bool may_be_empty = false) {
  if constexpr (!is_binary_inspector<F>)
    return f(caf::meta::type_name(name), value.size());
  else if constexpr (F::reads_state)
    return save_frame(f, value);
  else
    return load_frame(f, value, max_bytes, may_be_empty);
}

} // namespace detail

template <class F>
typename F::result_type inspect(F& f, shared_frame& x) {
  return detail::inspect_frame(f, "shared_frame", x.value, compute::max_frame_bytes);
}

template <class F>
typename F::result_type inspect(F& f, snapshot_chunk& x) {
  return detail::inspect_frame(f, "snapshot_chunk", x.value, compute::max_snapshot_chunk_bytes);
}

template <class F>
typename F::result_type inspect(F& f, assembled_snapshot& x) {
  return detail::inspect_frame(f, "assembled_snapshot", x.value, compute::max_frame_bytes);
}

template <class F>
typename F::result_type inspect(F& f, snapshot_sent& x) {
  return f(caf::meta::type_name("snapshot_sent"), x.snapshot_id, x.chunks, x.bytes);
}

template <class F>
typename F::result_type inspect(F& f, round_work& x) {
  return f(caf::meta::type_name("round_work"), x.round, x.epoch, x.rank, x.ranks, x.indices,
           x.origins, x.common_steps, x.most_steps);
}

template <class F>
typename F::result_type inspect(F& f, round_plan& x) {
  return f(caf::meta::type_name("round_plan"), x.job_id, x.round, x.workers);
}

template <class F>
typename F::result_type inspect(F& f, origin_frames& x) {
  return f(caf::meta::type_name("origin_frames"), x.origin, x.round, x.frames, x.drained);
}

template <class F>
typename F::result_type inspect(F& f, step_report& x) {
  return f(caf::meta::type_name("step_report"), x.worker, x.epoch, x.batches, x.loss_sum,
           x.samples);
}

template <class F>
typename F::result_type inspect(F& f, epoch_report& x) {
  return f(caf::meta::type_name("epoch_report"), x.worker, x.epoch, x.loss_sum, x.batches,
           x.samples, x.iteration);
}

template <class F>
typename F::result_type inspect(F& f, drain_report& x) {
  return f(caf::meta::type_name("drain_report"), x.worker, x.epoch, x.updates_applied,
           x.duplicate_updates_applied, x.frames_rejected);
}

template <class F>
typename F::result_type inspect(F& f, drain_marker& x) {
  return f(caf::meta::type_name("drain_marker"), x.origin, x.epoch);
}

template <class F>
typename F::result_type inspect(F& f, framing_stats& x) {
  return f(caf::meta::type_name("framing_stats"), x.updates, x.frames_sent, x.bytes_sent,
           x.dense_bytes_equivalent, x.density_sum, x.threshold, x.averages, x.push_bytes,
           x.push_dense_bytes, x.pull_bytes, x.tensors);
}

template <class F>
typename F::result_type inspect(F& f, relay_stats& x) {
  return f(caf::meta::type_name("relay_stats"), x.frames_forwarded, x.duplicates_dropped,
           x.frames_rejected, x.bytes_received, x.averaging_bytes);
}

template <class F>
typename F::result_type inspect(F& f, average_part& x) {
  return f(caf::meta::type_name("average_part"), x.round, x.index, x.attempt, x.members, x.sum);
}

template <class F>
typename F::result_type inspect(F& f, average_total& x) {
  return f(caf::meta::type_name("average_total"), x.round, x.index, x.sum);
}

template <class F>
typename F::result_type inspect(F& f, average_tree& x) {
  return f(caf::meta::type_name("average_tree"), x.version, x.node, x.root, x.nodes, x.parents);
}

template <class F>
typename F::result_type inspect(F& f, kv_push& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_push"), x.worker, x.round, x.step, x.weight,
             x.gradient.size());
  } else {
    if (auto err = f(x.worker, x.round, x.step, x.weight))
      return err;
    // A join (weight 0) carries no gradient.
    return detail::inspect_frame(f, "gradient", x.gradient, compute::max_frame_bytes,
                                 x.weight == 0);
  }
}

template <class F>
typename F::result_type inspect(F& f, kv_values& x) {
  return detail::inspect_frame(f, "kv_values", x.values, compute::max_frame_bytes);
}

template <class F>
typename F::result_type inspect(F& f, kv_local_step& x) {
  return f(caf::meta::type_name("kv_local_step"), x.round, x.slot, x.step);
}

template <class F>
typename F::result_type inspect(F& f, kv_local_answer& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_local_answer"), x.round, x.step, x.range, x.values.size());
  } else {
    if (auto err = f(x.round, x.step, x.range))
      return err;
    return detail::inspect_frame(f, "values", x.values, compute::max_frame_bytes);
  }
}

template <class F>
typename F::result_type inspect(F& f, kv_shard_entry& x) {
  return f(caf::meta::type_name("kv_shard_entry"), x.key, x.part, x.server, x.offset, x.count,
           x.shard, x.position, x.holder);
}

template <class F>
typename F::result_type inspect(F& f, shard_assignment& x) {
  return f(caf::meta::type_name("shard_assignment"), x.job_id, x.job_text, x.source, x.server,
           x.servers, x.replicas, x.ranges);
}

template <class F>
typename F::result_type inspect(F& f, shards_ready& x) {
  return f(caf::meta::type_name("shards_ready"), x.job_id, x.node_id, x.shards, x.endpoint);
}

template <class F>
typename F::result_type inspect(F& f, kv_round& x) {
  return f(caf::meta::type_name("kv_round"), x.round, x.epoch, x.workers);
}

template <class F>
typename F::result_type inspect(F& f, kv_done& x) {
  return f(caf::meta::type_name("kv_done"), x.worker, x.round, x.steps);
}

template <class F>
typename F::result_type inspect(F& f, shard_stats& x) {
  return f(caf::meta::type_name("shard_stats"), x.updates, x.pushes, x.duplicates, x.rejected,
           x.push_bytes, x.pull_bytes);
}

template <class F>
typename F::result_type inspect(F& f, join_request& x) {
  return f(caf::meta::type_name("join_request"), x.version, x.name, x.address, x.cores,
           x.workers, x.admission_token, x.role, x.memory_limit, x.speed_factor,
           x.compute_rate);
}

template <class F>
typename F::result_type inspect(F& f, join_reply& x) {
  return f(caf::meta::type_name("join_reply"), x.accepted, x.node_id, x.reason);
}

template <class F>
typename F::result_type inspect(F& f, job_submission& x) {
  return f(caf::meta::type_name("job_submission"), x.job_text, x.source, x.checkpoint_dir,
           x.nodes, x.min_nodes, x.max_nodes, x.rejoin_timeout_ms, x.topology, x.fanout,
           x.kvstore, x.servers, x.replicas, x.pipeline, x.averaging);
}

template <class F>
typename F::result_type inspect(F& f, submit_reply& x) {
  return f(caf::meta::type_name("submit_reply"), x.accepted, x.job_id, x.reason);
}

template <class F>
typename F::result_type inspect(F& f, job_assignment& x) {
  return f(caf::meta::type_name("job_assignment"), x.job_id, x.job_text, x.source,
           x.checkpoint_dir, x.rank, x.workers, x.first_worker, x.total_workers, x.origins, x.hub,
           x.shards, x.server_endpoints);
}

template <class F>
typename F::result_type inspect(F& f, node_ready& x) {
  return f(caf::meta::type_name("node_ready"), x.job_id, x.node_id, x.relay, x.job_name,
           x.epochs, x.batches_per_epoch, x.samples_per_epoch, x.train_samples, x.batch_size,
           x.workers, x.seed, x.shuffle, x.relay_endpoint, x.averaging_frequency, x.mode,
           x.kvstore);
}

template <class F>
typename F::result_type inspect(F& f, topology_update& x) {
  return f(caf::meta::type_name("topology_update"), x.job_id, x.version, x.parent, x.resend,
           x.parent_endpoint);
}

template <class F>
typename F::result_type inspect(F& f, epoch_check& x) {
  return f(caf::meta::type_name("epoch_check"), x.tested, x.checkpoint);
}

template <class F>
typename F::result_type inspect(F& f, node_failure& x) {
  return f(caf::meta::type_name("node_failure"), x.job_id, x.node_id, x.message);
}

template <class F>
typename F::result_type inspect(F& f, worker_activity& x) {
  return f(caf::meta::type_name("worker_activity"), x.worker, x.round, x.steps, x.answered,
           x.waiting, x.finished, x.waiting_for);
}

template <class F>
typename F::result_type inspect(F& f, node_activity& x) {
  return f(caf::meta::type_name("node_activity"), x.job_id, x.node_id, x.workers);
}

template <class F>
typename F::result_type inspect(F& f, node_progress& x) {
  return f(caf::meta::type_name("node_progress"), x.job_id, x.node_id, x.round, x.batches,
           x.samples, x.loss_sum, x.job_samples, x.sent, x.bytes_received);
}

template <class F>
typename F::result_type inspect(F& f, node_epoch_report& x) {
  return f(caf::meta::type_name("node_epoch_report"), x.job_id, x.node_id, x.round, x.totals,
           x.steps, x.iteration, x.drained);
}

template <class F>
typename F::result_type inspect(F& f, node_sharing_report& x) {
  return f(caf::meta::type_name("node_sharing_report"), x.job_id, x.node_id, x.sent, x.relayed);
}

template <class F>
typename F::result_type inspect(F& f, job_progress& x) {
  return f(caf::meta::type_name("job_progress"), x.job_id, x.progress, x.cluster);
}

template <class F>
typename F::result_type inspect(F& f, job_epoch& x) {
  return f(caf::meta::type_name("job_epoch"), x.job_id, x.summary);
}

template <class F>
typename F::result_type inspect(F& f, job_finished& x) {
  return f(caf::meta::type_name("job_finished"), x.job_id, x.succeeded, x.cancelled, x.failure,
           x.report);
}

template <class F>
typename F::result_type inspect(F& f, job_checkpointed& x) {
  return f(caf::meta::type_name("job_checkpointed"), x.job_id, x.epochs_done, x.report);
}

template <class F>
typename F::result_type inspect(F& f, keepalive_reply& x) {
  return f(caf::meta::type_name("keepalive_reply"), x.dropped, x.reason);
}

template <class F>
typename F::result_type inspect(F& f, node_status& x) {
  return f(caf::meta::type_name("node_status"), x.node_id, x.name, x.address, x.cores,
           x.workers, x.incarnation, x.role, x.memory_limit, x.speed_factor,
           x.compute_rate);
}

template <class F>
typename F::result_type inspect(F& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.job_id, x.name, x.state, x.epoch, x.epochs,
           x.failure, x.test_accuracy, x.topology, x.nodes, x.nodes_lost, x.nodes_restored,
           x.nodes_joined, x.stall);
}

template <class F>
typename F::result_type inspect(F& f, cluster_status& x) {
  return f(caf::meta::type_name("cluster_status"), x.nodes, x.jobs, x.membership_epoch);
}

template <class F>
typename F::result_type inspect(F& f, kv_chain_link& x) {
  return f(caf::meta::type_name("kv_chain_link"), x.version, x.shard, x.successor);
}

template <class F>
typename F::result_type inspect(F& f, chain_wiring& x) {
  return f(caf::meta::type_name("chain_wiring"), x.job_id, x.links, x.endpoints);
}

template <class F>
typename F::result_type inspect(F& f, kv_chain_step& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_chain_step"), x.version, x.seq, x.round, x.step,
             x.mean.size());
  } else {
    if (auto err = f(x.version, x.seq, x.round, x.epoch, x.step, x.workers))
      return err;
    return detail::inspect_frame(f, "mean", x.mean, compute::max_frame_bytes);
  }
}

template <class F>
typename F::result_type inspect(F& f, kv_round_record& x) {
  return f(caf::meta::type_name("kv_round_record"), x.round, x.planned, x.epoch, x.workers,
           x.done, x.latest);
}

template <class F>
typename F::result_type inspect(F& f, kv_shard_state& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("kv_shard_state"), x.version, x.seq, x.iteration,
             x.parameters.size());
  } else {
    if (auto err = f(x.version, x.seq, x.iteration, x.epoch, x.rounds, x.closed, x.lost_nodes))
      return err;
    if (auto err = detail::inspect_frame(f, "parameters", x.parameters, compute::max_frame_bytes))
      return err;
    if (auto err = detail::inspect_frame(f, "updater_state", x.updater_state,
                                         compute::max_frame_bytes))
      return err;
    return detail::inspect_frame(f, "latest", x.latest, compute::max_frame_bytes);
  }
}

template <class F>
typename F::result_type inspect(F& f, kv_reroute& x) {
  return f(caf::meta::type_name("kv_reroute"), x.job_id, x.heads, x.endpoints);
}

template <class F>
typename F::result_type inspect(F& f, member_lost& x) {
  return f(caf::meta::type_name("member_lost"), x.node_id, x.membership_epoch, x.reason,
           x.silent_seconds);
}

template <class F>
typename F::result_type inspect(F& f, member_joined& x) {
  return f(caf::meta::type_name("member_joined"), x.node, x.agent, x.membership_epoch);
}

// -- pipeline mode (issue #20): subnet actors, one pipeline stage each -----------------------

/// job_master -> a worker node's agent: run stage `stage` of `stages` of a pipeline job, the
/// network's layers [first_layer, end_layer); answered with stage_ready.
struct stage_assignment {
  std::uint64_t job_id = 0;
  std::string job_text;
  std::string source;
  std::uint32_t stage = 0;
  std::uint32_t stages = 1;
  std::uint32_t first_layer = 0;
  std::uint32_t end_layer = 0;
  std::uint32_t micro_batches = 1;  ///< a minibatch is split into this many
  std::uint32_t generation = 0;     ///< the pipeline's, which grows with every stage restore
  std::uint32_t pipeline = 0;       ///< which copy of the pipeline (--pipelines)
  std::uint32_t pipelines = 1;      ///< copies, each stage's sharing their updates
  /// Dense layers split into blocks of output columns (the layer ranges count the blocks).
  std::vector<compute::column_plan> column_plans{};
};

/// node_agent -> job_master: the node's subnet runs.
struct stage_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  caf::actor subnet;
  /// HOST:PORT where the node publishes the subnet, for its neighbours' nodes to connect to
  /// so that activations do not pass through the scheduler; empty: none.
  std::string endpoint{};
};

/// job_master -> every subnet: its neighbours (null at the pipeline's ends), where the last
/// stage sends the end of an epoch, and with --pipelines above 1 the same stage of every copy
/// of the pipeline by copy (its own entry null), which it shares its updates with.
struct stage_links {
  caf::actor upstream;
  caf::actor downstream;
  caf::actor master;
  std::uint32_t generation = 0;  ///< stage messages of another generation are dropped
  std::vector<caf::actor> peers{};
};

/// job_master -> the first subnet: train 0-based epoch `epoch`, or evaluate the model on the
/// test set after it.
struct stage_run {
  std::uint32_t epoch = 0;
  bool evaluation = false;
  std::uint32_t generation = 0;
  std::uint64_t from_step = 0;  ///< the epoch's minibatches already trained (a restore)
};

/// subnet -> the next subnet: one micro-batch's activations, rows x the stage's output width,
/// as a dense fp32 update frame (compute/frames/update_frame.hpp).
struct stage_forward {
  std::uint32_t generation = 0;
  std::uint32_t epoch = 0;
  std::uint64_t epoch_step = 0;         ///< the minibatch, counted in its epoch
  std::uint64_t step = 0;               ///< the minibatch, counted over the job
  std::uint32_t first_row = 0;          ///< the micro-batch's first sample in the minibatch
  std::uint32_t rows = 0;
  std::uint32_t minibatch_samples = 0;  ///< samples of the whole minibatch
  std::uint32_t micro_batches = 0;      ///< of this minibatch
  bool evaluation = false;              ///< inference only: no backward follows
  std::vector<std::int32_t> labels;     ///< the micro-batch's labels, for the last stage
  compute::frame activations;
};

/// subnet -> the previous subnet: dL/d(its activations) of one micro-batch, as a dense fp32
/// update frame.
struct stage_backward {
  std::uint32_t generation = 0;
  std::uint64_t step = 0;
  std::uint32_t first_row = 0;
  std::uint32_t rows = 0;
  compute::frame gradient;
};

/// subnet -> the next subnet after an epoch's (or evaluation's) last micro-batch, and from
/// the last stage to the job_master: what the epoch added up to, each stage adding its own.
struct stage_epoch_end {
  std::uint32_t generation = 0;
  std::uint32_t epoch = 0;
  bool evaluation = false;
  std::uint64_t steps = 0;     ///< minibatches (updater steps of every stage)
  std::uint64_t samples = 0;
  double loss_sum = 0.0;       ///< training: sum of the minibatches' mean losses; else per sample
  std::uint64_t correct = 0;   ///< evaluation: samples classified right
  std::vector<double> busy_seconds;             ///< by stage: computing and framing
  std::vector<std::uint64_t> activation_bytes;  ///< by stage: frame bytes it sent
};

/// subnet -> the same stage of the other copies of its pipeline (--pipelines above 1): the
/// update of one of its steps, threshold-encoded against its residual, as an update frame
/// whose header names the copy (origin_node) and the epoch and step (iteration) it ends.
struct stage_update {
  std::uint32_t generation = 0;
  compute::frame update;
};

/// Where a pipeline stood when its stages took a snapshot: before minibatch `epoch_step` of
/// `epoch` (an epoch's end is the next epoch's step 0).
struct stage_point {
  std::uint32_t epoch = 0;
  std::uint64_t epoch_step = 0;
  friend bool operator==(const stage_point&, const stage_point&) = default;
  friend auto operator<=>(const stage_point&, const stage_point&) = default;
};

/// A stage's snapshot at `at`, stored: the stage's chunks went to its holder (a neighbouring
/// stage) first, then this note (subnet -> holder), which the holder passes on once it holds
/// the whole snapshot (holder -> job_master). The last stage's epoch figures so far ride
/// along, for a restore to go on from.
struct stage_snapshot_note {
  std::uint32_t stage = 0;
  stage_point at;
  std::uint64_t step = 0;  ///< minibatches over the job
  std::uint64_t snapshot_id = 0;
  std::uint64_t steps = 0;  ///< the last stage's figures of the epoch so far
  std::uint64_t samples = 0;
  double loss_sum = 0.0;
};

/// job_master -> a surviving subnet after a stage's loss: go back to the snapshot taken at
/// `to` (with the figures of `note`, the last stage's) and drop every stage message of an
/// older generation; answered with the minibatches undone. With `send_copy` its holder was
/// lost with the node: once linked again, it sends the holder a copy of that snapshot, so a
/// second loss finds one.
struct stage_rollback {
  std::uint32_t generation = 0;
  stage_snapshot_note to;
  bool send_copy = false;
};

/// job_master -> a re-spawned subnet: take stage `to.stage`'s snapshot at `to.at` from
/// `holder` (which keeps it), then answer (0 minibatches undone).
struct stage_restore {
  caf::actor holder;
  stage_snapshot_note to;
};

/// re-spawned subnet -> holder: send the snapshot of `stage` taken at `at` as chunks, then
/// answer snapshot_sent.
struct stage_snapshot_fetch {
  std::uint32_t stage = 0;
  stage_point at;
};

/// job_master -> a subnet of a re-partitioned pipeline (a new generation on a new split of the
/// layers, at an epoch's end): put its layers' state together from the old subnets `sources`,
/// source i holding layers [first_layers[i], end_layers[i]) (each asked with
/// stage_state_fetch), take up the pipeline's place `to`, then answer (0 minibatches undone).
struct stage_refill {
  std::vector<caf::actor> sources;
  std::vector<std::uint32_t> first_layers;
  std::vector<std::uint32_t> end_layers;
  std::uint32_t generation = 0;  ///< the old subnets'
  stage_snapshot_note to;
};

/// job_master -> a node agent once a re-partitioned pipeline's new subnets hold their state:
/// end the old split's `subnets` it runs for job `job_id` (their end is no failure).
struct stage_retire {
  std::uint64_t job_id = 0;
  std::vector<caf::actor> subnets;
};

/// new subnet -> an old subnet of the same pipeline of generation `generation`, idle at an
/// epoch's end: send its state as it is now as snapshot chunks, then answer snapshot_sent.
struct stage_state_fetch {
  std::uint32_t generation = 0;
};

template <class F>
typename F::result_type inspect(F& f, stage_assignment& x) {
  return f(caf::meta::type_name("stage_assignment"), x.job_id, x.job_text, x.source, x.stage,
           x.stages, x.first_layer, x.end_layer, x.micro_batches, x.generation, x.pipeline,
           x.pipelines, x.column_plans);
}

template <class F>
typename F::result_type inspect(F& f, stage_ready& x) {
  return f(caf::meta::type_name("stage_ready"), x.job_id, x.node_id, x.subnet, x.endpoint);
}

template <class F>
typename F::result_type inspect(F& f, stage_links& x) {
  return f(caf::meta::type_name("stage_links"), x.upstream, x.downstream, x.master,
           x.generation, x.peers);
}

template <class F>
typename F::result_type inspect(F& f, stage_run& x) {
  return f(caf::meta::type_name("stage_run"), x.epoch, x.evaluation, x.generation, x.from_step);
}

template <class F>
typename F::result_type inspect(F& f, stage_forward& x) {
  if constexpr (!detail::is_binary_inspector<F>)
    return f(caf::meta::type_name("stage_forward"), x.step, x.first_row, x.rows,
             x.activations.size());
  else if constexpr (F::reads_state)
    return caf::error::eval([&] { return f(x.generation, x.epoch, x.epoch_step, x.step,
                                           x.first_row, x.rows, x.minibatch_samples,
                                           x.micro_batches, x.evaluation, x.labels); },
                            [&] { return detail::save_frame(f, x.activations); });
  else
    return caf::error::eval([&] { return f(x.generation, x.epoch, x.epoch_step, x.step,
                                           x.first_row, x.rows, x.minibatch_samples,
                                           x.micro_batches, x.evaluation, x.labels); },
                            [&] { return detail::load_frame(f, x.activations); });
}

template <class F>
typename F::result_type inspect(F& f, stage_backward& x) {
  if constexpr (!detail::is_binary_inspector<F>)
    return f(caf::meta::type_name("stage_backward"), x.step, x.first_row, x.rows,
             x.gradient.size());
  else if constexpr (F::reads_state)
    return caf::error::eval([&] { return f(x.generation, x.step, x.first_row, x.rows); },
                            [&] { return detail::save_frame(f, x.gradient); });
  else
    return caf::error::eval([&] { return f(x.generation, x.step, x.first_row, x.rows); },
                            [&] { return detail::load_frame(f, x.gradient); });
}

template <class F>
typename F::result_type inspect(F& f, stage_epoch_end& x) {
  return f(caf::meta::type_name("stage_epoch_end"), x.generation, x.epoch, x.evaluation,
           x.steps, x.samples, x.loss_sum, x.correct, x.busy_seconds, x.activation_bytes);
}

} // namespace strom::actors

namespace strom::compute {

template <class F>
typename F::result_type inspect(F& f, column_plan& x) {
  return f(caf::meta::type_name("column_plan"), x.layer, x.bounds);
}

} // namespace strom::compute

namespace strom::actors {

template <class F>
typename F::result_type inspect(F& f, stage_point& x) {
  return f(caf::meta::type_name("stage_point"), x.epoch, x.epoch_step);
}

template <class F>
typename F::result_type inspect(F& f, stage_snapshot_note& x) {
  return f(caf::meta::type_name("stage_snapshot_note"), x.stage, x.at, x.step, x.snapshot_id,
           x.steps, x.samples, x.loss_sum);
}

template <class F>
typename F::result_type inspect(F& f, stage_rollback& x) {
  return f(caf::meta::type_name("stage_rollback"), x.generation, x.to, x.send_copy);
}

template <class F>
typename F::result_type inspect(F& f, stage_update& x) {
  if constexpr (!detail::is_binary_inspector<F>) {
    return f(caf::meta::type_name("stage_update"), x.generation, x.update.size());
  } else {
    if (auto err = f(x.generation))
      return err;
    return detail::inspect_frame(f, "update", x.update, compute::max_frame_bytes);
  }
}

template <class F>
typename F::result_type inspect(F& f, stage_restore& x) {
  return f(caf::meta::type_name("stage_restore"), x.holder, x.to);
}

template <class F>
typename F::result_type inspect(F& f, stage_snapshot_fetch& x) {
  return f(caf::meta::type_name("stage_snapshot_fetch"), x.stage, x.at);
}

template <class F>
typename F::result_type inspect(F& f, stage_refill& x) {
  return f(caf::meta::type_name("stage_refill"), x.sources, x.first_layers, x.end_layers,
           x.generation, x.to);
}

template <class F>
typename F::result_type inspect(F& f, stage_retire& x) {
  return f(caf::meta::type_name("stage_retire"), x.job_id, x.subnets);
}

template <class F>
typename F::result_type inspect(F& f, stage_state_fetch& x) {
  return f(caf::meta::type_name("stage_state_fetch"), x.generation);
}

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

CAF_END_TYPE_ID_BLOCK(strom)
