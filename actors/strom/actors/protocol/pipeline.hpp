#pragma once
// Pipeline mode (issue #20): subnet actors, one pipeline stage each. The job_master assigns
// stages to worker nodes' agents and links the subnets; subnets pass activations, gradients
// and updates between them, and snapshot, roll back, restore or re-partition on a loss.

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/clients.hpp"
#include "strom/actors/protocol/frame_inspection.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"

namespace strom::compute {

// stage_assignment carries column plans: their inspect sits in column_plan's namespace, where
// argument lookup finds it.
template <class F>
typename F::result_type inspect(F& f, column_plan& x) {
  return f(caf::meta::type_name("column_plan"), x.layer, x.bounds);
}

} // namespace strom::compute

namespace strom::actors {

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
  /// A job that goes on from a checkpoint (--resume): the whole network's state, whose share
  /// the stage starts from; only in the first placement (generation 0).
  job_resume resume{};
  /// The pipeline's secret, which only its job_master hands out: a stage gives its state only
  /// to a fetch that names it (stage_state_fetch), so no other peer can read the model.
  std::uint64_t fetch_token = 0;
};

template <class F>
typename F::result_type inspect(F& f, stage_assignment& x) {
  return f(caf::meta::type_name("stage_assignment"), x.job_id, x.job_text, x.source, x.stage,
           x.stages, x.first_layer, x.end_layer, x.micro_batches, x.generation, x.pipeline,
           x.pipelines, x.column_plans, x.resume, x.fetch_token);
}

/// node_agent -> job_master: the node's subnet runs.
struct stage_ready {
  std::uint64_t job_id = 0;
  std::uint64_t node_id = 0;
  caf::actor subnet;
  /// HOST:PORT where the node publishes the subnet, for its neighbours' nodes to connect to
  /// so that activations do not pass through the scheduler; empty: none.
  std::string endpoint{};
};

template <class F>
typename F::result_type inspect(F& f, stage_ready& x) {
  return f(caf::meta::type_name("stage_ready"), x.job_id, x.node_id, x.subnet, x.endpoint);
}

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

template <class F>
typename F::result_type inspect(F& f, stage_links& x) {
  return f(caf::meta::type_name("stage_links"), x.upstream, x.downstream, x.master,
           x.generation, x.peers);
}

/// job_master -> the first subnet: train 0-based epoch `epoch`, or evaluate the model on the
/// test set after it.
struct stage_run {
  std::uint32_t epoch = 0;
  bool evaluation = false;
  std::uint32_t generation = 0;
  std::uint64_t from_step = 0;  ///< the epoch's minibatches already trained (a restore)
};

template <class F>
typename F::result_type inspect(F& f, stage_run& x) {
  return f(caf::meta::type_name("stage_run"), x.epoch, x.evaluation, x.generation, x.from_step);
}

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

/// subnet -> the previous subnet: dL/d(its activations) of one micro-batch, as a dense fp32
/// update frame.
struct stage_backward {
  std::uint32_t generation = 0;
  std::uint64_t step = 0;
  std::uint32_t first_row = 0;
  std::uint32_t rows = 0;
  compute::frame gradient;
};

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

template <class F>
typename F::result_type inspect(F& f, stage_epoch_end& x) {
  return f(caf::meta::type_name("stage_epoch_end"), x.generation, x.epoch, x.evaluation,
           x.steps, x.samples, x.loss_sum, x.correct, x.busy_seconds, x.activation_bytes);
}

/// subnet -> the same stage of the other copies of its pipeline (--pipelines above 1): the
/// update of one of its steps, threshold-encoded against its residual, as an update frame
/// whose header names the copy (origin_node) and the epoch and step (iteration) it ends.
struct stage_update {
  std::uint32_t generation = 0;
  compute::frame update;
};

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

/// Where a pipeline stood when its stages took a snapshot: before minibatch `epoch_step` of
/// `epoch` (an epoch's end is the next epoch's step 0).
struct stage_point {
  std::uint32_t epoch = 0;
  std::uint64_t epoch_step = 0;
  friend bool operator==(const stage_point&, const stage_point&) = default;
  friend auto operator<=>(const stage_point&, const stage_point&) = default;
};

template <class F>
typename F::result_type inspect(F& f, stage_point& x) {
  return f(caf::meta::type_name("stage_point"), x.epoch, x.epoch_step);
}

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

template <class F>
typename F::result_type inspect(F& f, stage_snapshot_note& x) {
  return f(caf::meta::type_name("stage_snapshot_note"), x.stage, x.at, x.step, x.snapshot_id,
           x.steps, x.samples, x.loss_sum);
}

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

template <class F>
typename F::result_type inspect(F& f, stage_rollback& x) {
  return f(caf::meta::type_name("stage_rollback"), x.generation, x.to, x.send_copy);
}

/// job_master -> a re-spawned subnet: take stage `to.stage`'s snapshot at `to.at` from
/// `holder` (which keeps it), then answer (0 minibatches undone).
struct stage_restore {
  caf::actor holder;
  stage_snapshot_note to;
};

template <class F>
typename F::result_type inspect(F& f, stage_restore& x) {
  return f(caf::meta::type_name("stage_restore"), x.holder, x.to);
}

/// re-spawned subnet -> holder: send the snapshot of `stage` taken at `at` as chunks, then
/// answer snapshot_sent.
struct stage_snapshot_fetch {
  std::uint32_t stage = 0;
  stage_point at;
};

template <class F>
typename F::result_type inspect(F& f, stage_snapshot_fetch& x) {
  return f(caf::meta::type_name("stage_snapshot_fetch"), x.stage, x.at);
}

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

template <class F>
typename F::result_type inspect(F& f, stage_refill& x) {
  return f(caf::meta::type_name("stage_refill"), x.sources, x.first_layers, x.end_layers,
           x.generation, x.to);
}

/// job_master -> a node agent once a re-partitioned pipeline's new subnets hold their state:
/// end the old split's `subnets` it runs for job `job_id` (their end is no failure).
struct stage_retire {
  std::uint64_t job_id = 0;
  std::vector<caf::actor> subnets;
};

template <class F>
typename F::result_type inspect(F& f, stage_retire& x) {
  return f(caf::meta::type_name("stage_retire"), x.job_id, x.subnets);
}

/// new subnet -> an old subnet of the same pipeline of generation `generation`, idle at an
/// epoch's end: send its state as it is now as snapshot chunks, then answer snapshot_sent.
/// `token` is the pipeline's fetch_token (stage_assignment): a fetch without it is refused.
struct stage_state_fetch {
  std::uint32_t generation = 0;
  std::uint64_t token = 0;
};

template <class F>
typename F::result_type inspect(F& f, stage_state_fetch& x) {
  return f(caf::meta::type_name("stage_state_fetch"), x.generation, x.token);
}

/// job_master -> the first stage of a pipeline's first copy, every stage idle after an
/// epoch's evaluation: gather every stage's state (stage_state_fetch; its own directly), put
/// the whole network's together and save it as the run's checkpoint in `folder` (issue #39),
/// and keep it for `keeper`, the job's checkpoint keeper, to fetch (snapshot_atom) into the
/// scheduler's store; answered with the checkpoint's path (empty: no folder).
struct stage_checkpoint {
  std::vector<caf::actor> sources;  ///< the copy's subnets, stage by stage
  std::vector<std::uint32_t> first_layers;
  std::vector<std::uint32_t> end_layers;
  std::uint32_t generation = 0;  ///< the subnets'
  std::uint32_t epochs = 0;      ///< epochs done
  double test_accuracy = -1.0;
  double test_loss = 0.0;
  std::string folder;            ///< the run's checkpoint folder
  std::uint32_t keep = 0;        ///< epoch checkpoints kept; 0: every one
  std::uint32_t nodes = 0;       ///< the job's worker nodes, recorded for --resume
  caf::actor keeper;             ///< null: the scheduler keeps no checkpoints
};

template <class F>
typename F::result_type inspect(F& f, stage_checkpoint& x) {
  return f(caf::meta::type_name("stage_checkpoint"), x.sources, x.first_layers, x.end_layers,
           x.generation, x.epochs, x.test_accuracy, x.test_loss, x.folder, x.keep, x.nodes,
           x.keeper);
}

} // namespace strom::actors
