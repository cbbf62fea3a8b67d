#pragma once
// The subnet: one stage of a pipeline job (distributed.mode pipeline, issue #20), a
// contiguous run of the network's layers on one node. Activations go downstream and their
// gradients upstream, each micro-batch's as one dense fp32 update frame
// (compute/frames/update_frame.hpp), so a remote send serialises the bytes once.
//
// Schedule (synchronous: one forward, one backward, with a flush; PipeDream-Flush): the first
// stage reads the data (the whole training set in the job's seeded per-epoch order), splits
// each minibatch into M micro-batches and sends the forwards of the first 2K (two a stage:
// one fills the pipeline, one hides a message's round trip);
// every stage forwards a micro-batch when it arrives, the last computes the loss and runs its
// backward at once, and every stage runs a backward as soon as its gradient arrives. Each
// backward the first stage runs lets its next forward go, so no stage holds more than 2K
// micro-batches' activations (GPipe's schedule, distributed.schedule gpipe, holds all M on
// the first stage): a stage reserves that many slots of rows (compute::micro_batch_slots). Once a stage has run the backward of
// all M micro-batches it takes one updater step on their summed gradient (the flush); the
// first stage starts the next minibatch only then, so a step computes the whole network's
// gradient of the minibatch, up to summation order. After the last minibatch the first stage sends an epoch-end marker
// downstream behind it; each stage adds its figures and the last hands them to the job_master.
// Evaluation runs the test set forward through the same stages.
//
// A stage computes on its node's scheduler threads (not detached: its handle travels to the
// other stages' nodes, and a detached actor's thread waits until every remote proxy of it is
// gone) and waits after each computation as its node's speed factor asks
// (compute_slowdown.hpp). A frame that does not fit the stage ends it with an error: its node
// reports the failure and the job fails.
//
// Restore (LightDNN's): every stage snapshots its parameters and updater state when training
// starts, every snapshot_every minibatches and at each epoch's end, keeps the snapshot and
// sends a copy to its holder, a neighbouring stage (stage_snapshots.hpp), which tells the
// job_master once it holds it. When a stage's node is lost, the job_master re-spawns the stage
// on a spare node from the holder's copy (stage_restore) and rolls every other stage back to
// its own snapshot of the same point (stage_rollback); the pipeline then goes on from there in
// a new generation, and messages of older generations still in flight are dropped.
//
// Re-partitioning (LightDNN's dynamic partition): at an epoch's end the job_master may split
// the layers again (job_repartition.cpp). Each subnet of the new split then fetches the state
// of the old subnets that held its layers (stage_state_fetch) and puts its own together from
// them (compute::regroup_stage); it keeps that as its first snapshot and sends its holder a
// copy once linked, so a loss right after finds a point to restore.
//
// Pipeline x data parallelism (--pipelines R above 1): R copies of the pipeline each train a
// share of every epoch, and the copies of a stage share their updates as data-parallel
// workers do (Deeplearning4j's threshold encoding with residuals): at its flush a stage
// encodes its update, applies all of it and sends the frame to its copies (stage_update).
// Ping-pong buffers (LightDNN): a stage computes a minibatch with its parameters while the
// copies' updates land in a second buffer, added at the next step boundary, so a minibatch's
// backward sees the weights its forward saw. The first stage starts minibatch j of an epoch
// only once every copy has sent the updates of its first j - 1 (one step of staleness), so no
// copy runs away from the others. Every copy snapshots at the same points, its residual
// included, and keeps its copies with a neighbour in its own copy; a restore takes every
// stage of every copy back to one point, where each copy had sent the others as many updates.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <capnp/common.h>
#include <kj/array.h>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/pipeline/stage_snapshots.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/data/dataset.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "strom/compute/pipeline/stage_regroup.hpp"
#include "strom/compute/pipeline/stage_replica.hpp"

namespace strom::actors {

/// Saves the whole network's state, put together from every stage's, as a run's checkpoint
/// (the runtime's: actors write no files); answers the checkpoint's path.
using stage_checkpoint_saver = std::function<result<std::string>(
  const compute::replica_snapshot& network, const stage_checkpoint& request)>;

/// What a subnet is built from (the runtime builds it: actors read no files).
struct subnet_setup {
  std::uint64_t job_id = 0;
  std::uint32_t stage = 0;
  std::uint32_t stages = 2;
  std::uint32_t micro_batches = 1;  ///< per minibatch (fewer when a minibatch is smaller)
  std::shared_ptr<compute::stage_replica> replica;
  /// The first stage's data: the training set, and the test set (null: none).
  std::shared_ptr<const compute::dataset> train;
  std::shared_ptr<const compute::dataset> test;
  std::uint64_t seed = 0;  ///< of the epochs' sample order
  bool shuffle = true;
  node_speed speed{};  ///< the node's over the epochs (compute_slowdown.hpp, a testing aid)
  std::uint32_t generation = 0;      ///< the pipeline's when the subnet was spawned
  std::uint64_t fetch_token = 0;     ///< the pipeline's secret (stage_assignment::fetch_token)
  /// The job_master that placed it: the only sender whose links, runs, rollbacks, restores
  /// and refills it takes (a stranger cannot move a stage's state).
  caf::actor_addr master{};
  std::uint32_t pipeline = 0;        ///< which copy of the pipeline (--pipelines)
  std::uint32_t pipelines = 1;       ///< copies: above 1, the stage's copies share updates
  compute::threshold_encoder_options sharing{};  ///< how a stage with copies encodes updates
  std::uint64_t snapshot_every = 100;  ///< minibatches between snapshots; 0: none taken
  /// The most an encoded snapshot of any stage can take: what a holder accepts (a copy
  /// larger than this is refused, and the stage cannot be restored from it).
  std::size_t snapshot_bytes = 0;
  caf::timespan snapshot_timeout = std::chrono::minutes(2);  ///< for a restore's fetch
  /// Every layer's size in the whole network: where a re-partitioned stage finds its layers
  /// in the old stages' state (compute::regroup_stage).
  std::vector<compute::layer_size> network_layers{};
  /// The first stage's: saves the pipeline's checkpoint (stage_checkpoint); empty: it saves
  /// none.
  stage_checkpoint_saver save_checkpoint{};
  /// How many micro-batches the first stage lets go at once (compute::slots_for).
  schema::PipelineSchedule schedule = schema::PipelineSchedule::ONE_FORWARD_ONE_BACKWARD;
};

/// Micro-batch `index` of `count` over a minibatch of `samples`: rows [first, first + rows),
/// the first samples % count micro-batches one row longer.
struct micro_batch_rows {
  std::uint32_t first = 0;
  std::uint32_t rows = 0;
};
micro_batch_rows micro_batch_of(std::uint32_t samples, std::uint32_t count, std::uint32_t index);

/// What a stage heard from one of its copies (--pipelines): the updates of an epoch.
struct copy_progress {
  std::uint32_t epoch = 0;
  std::uint64_t steps = 0;  ///< of that epoch, sent
};

/// A subnet's state.
struct subnet_state {
  stage_links links;
  std::uint32_t generation = 0;     ///< stage messages of other generations are dropped
  std::unique_ptr<compute::batch_loader> loader;  ///< the first stage's, this epoch
  std::uint32_t epoch = 0;
  std::uint64_t step = 0;           ///< minibatches started (first stage) or finished
  std::uint64_t epoch_step = 0;     ///< the minibatch in flight, counted in its epoch
  std::uint64_t next_epoch_step = 0;  ///< the first stage: the epoch's next minibatch
  std::uint32_t step_micro = 0;     ///< micro-batches of the minibatch in flight
  std::uint32_t step_done = 0;      ///< of those, backwards run
  std::uint32_t forwarded = 0;      ///< the first stage: of those, forwards sent
  const compute::batch* minibatch = nullptr;  ///< the first stage's, in its loader
  std::uint32_t step_samples = 0;
  double step_loss = 0.0;           ///< the last stage: the minibatch's mean loss so far
  stage_epoch_end totals;           ///< this epoch's (or evaluation's) figures so far
  double busy_seconds = 0.0;        ///< this epoch's computing and framing
  std::uint64_t sent_bytes = 0;     ///< this epoch's frame bytes sent
  compute::frame_workspace workspace;
  std::vector<float> received;        ///< a decoded output gradient
  std::vector<float> input_gradient;  ///< dL/d(input) of a micro-batch
  stage_snapshots snapshots;          ///< its own and the neighbours' it holds
  std::uint64_t snapshots_taken = 0;  ///< for their ids
  /// After a rollback whose holder was lost: the snapshot to copy to the new one once linked.
  std::optional<stage_snapshot_note> copy_to_send;
  // -- with copies (--pipelines above 1) --
  std::optional<compute::threshold_encoder> encoder;  ///< the stage's updates, its residual
  std::vector<float> incoming;        ///< the copies' updates since the last step boundary
  std::vector<copy_progress> copies;  ///< by copy
  bool waiting_for_copies = false;    ///< the first stage: its next minibatch waits
  // -- the first stage, with the scheduler's store --
  /// The whole network's state at the latest checkpoint, for `kept_for` (the job's
  /// checkpoint keeper) to fetch.
  std::shared_ptr<const kj::Array<capnp::word>> kept_network;
  caf::actor_addr kept_for;

  static inline const char* name = "strom.subnet";
};

/// Handles: stage_links -> wired_atom (answered before anything else is sent); stage_run (the
/// first stage: an epoch or an evaluation); stage_forward, stage_backward, stage_epoch_end from
/// its neighbours; snapshot_chunk and stage_snapshot_note (a neighbour's copy to hold);
/// stage_snapshot_fetch -> snapshot_sent (a held copy, as chunks to the sender);
/// stage_rollback -> minibatches undone; stage_restore -> 0 once restored; stage_update from
/// a copy of the stage; stage_state_fetch -> snapshot_sent (its state now, as chunks to the
/// sender); stage_refill -> 0 once its layers' state came from the old stages;
/// stage_checkpoint -> the path of the pipeline's checkpoint (the first stage); (snapshot_atom,
/// job, receiver) -> snapshot_sent: the network kept at the checkpoint, only to its keeper;
/// (timeout_atom, snapshot_atom, source, id) from itself: a snapshot awaited that long gives up.
caf::behavior subnet(caf::stateful_actor<subnet_state>* self, subnet_setup setup);

} // namespace strom::actors
