#pragma once
// The trainer: one data-parallel replica in one worker slot. Each step it computes an update
// on its next batch, threshold-encodes it against its own residual (per worker, as in
// Deeplearning4j: the dense update never leaves the thread that computed it; the updater
// computes it inside the encoder's pass, so it is not even stored), frames it
// through the node's framer and sends the frame itself to its sibling trainers and, when the
// job has other nodes, to the relay, which carries it to them (node_framer.hpp says why not
// through an actor). By default it also applies its own update to its replica in full, in the
// encoder's pass over it, and skips its own frame; every other worker's frames it applies as
// they come. Its replica is then the replicas' common part plus its own unsent residual
// (clipping the residual clips the replica too, so no replica strays further than the clip
// bound), and its next gradient sees all of its own progress. Deeplearning4j applies a
// worker's own update only as its encoded frame, which keeps the replicas identical but holds
// back each worker's own progress by its residual (measured on examples/fashion_mlp.job, 4
// nodes: 89.4% instead of 88.9% test accuracy; README). Frames and steps share one mailbox:
// frames that arrive during a step are applied before the next one, without locks. Staleness
// is bounded (stale-synchronous parallel, Ho et al. 2013): a trainer does not run more than
// `staleness` updates ahead of the slowest worker of any origin, counted in the frames it has
// applied. With parameter averaging (trainer_setup::averaging) it trains alone instead, frames
// an empty update each step (its clock), every K-th adds its contribution to the node's sum,
// and waits before its next step for the average, which the relays reduce along a tree
// (parameter_averaging.hpp). With parameter
// servers (trainer_setup::kv) each step's gradient goes to the shards and the next step
// follows once every shard answered with its range's parameters (kv_pusher.hpp). A node
// pushes once a step (MXNet's local aggregation): its first trainer pushes the mean of its
// workers' gradients (kv_node_sum.hpp, in slot order), hands the answers on
// and, once every worker of the node is through a round, tells the shards its steps.
// The loop (rounds, frames and the clocks they carry, parking) is trainer.cpp's in every mode;
// each mode's step and state are in its folder: sharing/trainer_sharing.cpp,
// averaging/trainer_averaging.cpp, kvstore/trainer_kv.cpp (trainer_state::mode).
// Spawn it detached: a step is long and must not block CAF's scheduler threads.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/kvstore/kv_node_sum.hpp"
#include "strom/actors/kvstore/kv_pusher.hpp"
#include "strom/actors/kvstore/kvstore_worker_state.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/averaging/averaging_worker_state.hpp"
#include "strom/actors/averaging/node_average.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/averaging/parameter_averaging.hpp"
#include "strom/actors/sharing/seen_updates.hpp"
#include "strom/actors/sharing/sharing_worker_state.hpp"
#include "strom/actors/sim_seams.hpp"
#include "strom/actors/worker/timeline.hpp"
#include "strom/actors/timing.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/parameter_blocks.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/replica.hpp"

namespace strom::actors {

/// Progress goes to the supervisor at most this often (the node agent passes it on every
/// 250 ms). A report per step woke a scheduler thread per step: on 2 workers, 4.5k of the 22k
/// context switches of a 3-epoch run, on the cores the trainers compute on.
inline constexpr auto step_report_interval = std::chrono::milliseconds(50);

/// Steps of a worker's own updates its unsent residual may hold before the log warns that the
/// replicas drift apart (tensor_sharing.hpp, lag_steps). A tensor sent at density d holds
/// about 1/d steps: measured 110-125 for the calibrated 1% on fashion_nesterov (bench/
/// sharing_jobs); 4x that is no longer sharing keeping up.
inline constexpr double max_lag_steps = 400.0;

/// What a trainer is built from.
struct trainer_setup {
  std::uint32_t worker = 0;                       ///< slot on the node
  std::shared_ptr<compute::replica> replica;      ///< read by others only between epochs
  std::shared_ptr<const compute::dataset> train;  ///< the node's training set
  compute::index_range share;                     ///< this worker's partition of `train`
  std::uint64_t seed = 0;                         ///< the job seed (epoch order)
  bool shuffle = true;                            ///< reshuffle the share every epoch
  std::size_t batch_size = 1;
  std::vector<std::uint64_t> origins;  ///< every node whose frames reach this trainer
  std::uint32_t staleness = 1;  ///< updates a step may run ahead of each origin's clock; 0:
                                ///< synchronous
  compute::threshold_encoder_options encoding;  ///< this worker's encoder settings
  /// Clear the updater's momentum of every element this worker sends (momentum factor
  /// masking, compute/codecs/sent_elements.hpp).
  bool momentum_masking = true;
  std::shared_ptr<node_framer> framer;  ///< the node's, shared by its trainers
  trainer_relay_actor relay;  ///< receives (publish_atom, frame or drain marker) for the peers
  trainer_supervisor_actor supervisor;  ///< receives step_report, epoch_report and drain_report
  /// Apply the worker's own update in full at once and skip its own frames (see above);
  /// false: apply it only as its frame, as Deeplearning4j does.
  bool apply_own_update = true;
  /// How long a parked trainer keeps its thread before it may block (timing.hpp).
  caf::timespan park_spin = timing{}.park_spin;
  /// With a frequency, the worker averages parameters instead of sharing updates
  /// (parameter_averaging.hpp).
  averaging_options averaging;
  std::shared_ptr<node_average> node_sums;  ///< the node's, shared by its trainers (averaging)
  /// With shards, the worker pushes gradients to parameter servers and takes their answers
  /// instead of sharing updates (kv_pusher.hpp).
  kv_options kv;
  /// The mean of the node's workers' gradients (kvstore with several workers a node), which
  /// the node's first trainer takes; null: the worker is alone on its node.
  std::shared_ptr<kv_node_sum> kv_sums;
  std::shared_ptr<timeline_track> track{};  ///< its timeline (--timeline); null: none kept
  /// The node's speed factor over the epochs (compute_slowdown.hpp, a testing aid).
  node_speed speed{};
  /// Set in a live simulation: told each step and applied frame (sim_seams.hpp).
  std::shared_ptr<compute_meter> meter{};
  /// Each update is multiplied by W^-update_power before it is applied and sent, W the
  /// round's workers (a planned round's count, else `workers_in_job`): 0 adds the workers'
  /// updates up (Deeplearning4j), 1 averages them (synchronous data parallelism's step;
  /// job.capnp, Sharing.combine).
  float update_power = 0.0f;
  std::uint32_t workers_in_job = 1;
};

/// How far one origin's frames got in the current rounds ("epoch" in frames and markers).
struct origin_progress {
  std::uint64_t origin = 0;
  std::uint32_t clock_epoch = 0;  ///< round of `clock`
  std::uint64_t clock = 0;        ///< the origin's clock in its latest frame applied of that
                                  ///< round: updates of its slowest worker the frames include
  std::uint32_t drained = 0;      ///< rounds whose drain marker arrived
  /// The current round waits for this origin. A lost origin stops being one; an origin heard
  /// of before its first round is not one yet.
  bool member = true;
};

/// A trainer's state.
struct trainer_state {
  std::unique_ptr<compute::batch_loader> loader;  ///< created by the first start
  std::optional<compute::threshold_encoder> encoder;  ///< holds this worker's residual
  float update_scale = 1.0f;  ///< what each update is multiplied by (trainer_setup::update_power)
  compute::frame_workspace workspace;
  seen_updates applied;  ///< keys of the frames applied, to catch duplicates
  std::vector<origin_progress> origins;  ///< every origin heard of or named by a round
  std::vector<trainer_sibling_actor> siblings;  ///< the node's other trainers
  bool other_nodes = false;              ///< frames must go to the relay
  step_report unreported;                ///< progress since the last step_report
  caf::actor_clock::time_point reported_at;  ///< when the last step_report went out
  std::uint32_t epoch = 0;  ///< the current round (an epoch when rounds are not planned)
  std::uint32_t drain_reported = 0;  ///< rounds whose drain_report went to the supervisor
  bool waiting = false;  ///< a step is held back by the staleness bound
  bool finished = false;  ///< its share of the round is trained (it waits for the drains)
  /// With a timeline: when the step waiting now was parked, and an origin it waits for.
  std::optional<caf::actor_clock::time_point> parked_at;
  std::uint64_t parked_for = 0;
  double loss_sum = 0.0;
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  std::uint64_t updates_applied = 0;
  std::uint64_t duplicate_updates_applied = 0;
  std::uint64_t frames_rejected = 0;
  std::uint32_t snapshots_sent = 0;  ///< numbers the next snapshot (trainer_snapshot.hpp)
  bool cut = false;  ///< the round was cut short: the next step ends it
  std::uint64_t most_steps = 0;  ///< of the round (round_work): a node joins up to it
  /// What its steps do, by the job's mode (the trainer's loop is the same in each): share
  /// updates (trainer_sharing.cpp), average parameters (trainer_averaging.cpp) or push to
  /// parameter servers (trainer_kv.cpp).
  std::variant<sharing_worker_state, averaging_worker_state, kvstore_worker_state> mode;

  static inline const char* name = "strom.trainer";
};

/// Handles: (siblings_atom, actor) adds a sibling trainer, which gets this worker's frames
/// and drain markers (siblings come in slot order: a kvstore node's first trainer is slot 0);
/// (start_atom, epoch) starts an epoch over the share (round = epoch);
/// round_work starts a round a job_master planned: its samples and the origins it waits for;
/// (forget_atom, origin) stops waiting for a lost origin's frames and drains (its frames
/// still in flight are applied); (cut_atom, round) ends the round after the step under way
/// (a node joins at that boundary); (restore_atom, assembled_snapshot) -> true takes a
/// snapshot's parameters, updater state and progress, with an empty residual (the residual
/// is the source's unsent update, which only the source may send); step_atom runs one
/// step, publishes its frame (to the siblings, the relay if there are other nodes, and
/// itself), reports progress at most every step_report_interval and queues the next, or parks
/// until the staleness bound allows it (after the partition: the last step_report and the
/// epoch_report to the supervisor and, from the node's last worker, the drain marker);
/// shared_frame is applied to the replica; drain_marker counts the origin as drained and,
/// once every member origin drained the round, answers the supervisor with a drain_report;
/// kv_reroute sends the unanswered pushes (or a finished round's kv_done) of the key ranges
/// it names to their new heads; kv_local_step and kv_done (a worker of the node added its
/// gradient, or finished the round) come to the node's first trainer, kv_local_answer (one
/// range's answer to a node push) to the node's other workers, each taking it as its own
/// step's or, once it finished the round, as a step it did not carry; (kv_pull_atom) takes
/// the shards' latest parameters and updater state into the replica (the node's first trainer);
/// (snapshot_atom, receiver) sends the replica's snapshot to `receiver` as snapshot_chunk
/// messages and answers snapshot_sent (trainer_snapshot.hpp); stall_atom -> worker_activity
/// (whom it waits for, for the stall watch). A parked
/// trainer spins for up to park_spin after each message before its thread may block. An
/// exception in a step ends the actor with its message; a setup without origins or framer
/// ends it at once with an error.
caf::behavior trainer(caf::stateful_actor<trainer_state>* self, trainer_setup setup);

} // namespace strom::actors
