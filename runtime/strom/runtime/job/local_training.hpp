#pragma once
// What a training run in this process is told (strom train, the embedding API): overrides of
// the job and where its outputs go. Every run, one worker or many, one node or several, trains
// on an in-process cluster of the same actors (cluster_training.hpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "strom/actors/timing.hpp"
#include "strom/actors/sharing/topology.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint_runs.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/observability/observation.hpp"
#include "strom/runtime/job/training_progress.hpp"

namespace strom::runtime {

/// Command-line overrides and outputs of a run.
struct local_training_options {
  std::optional<std::uint32_t> epochs;  ///< overrides training.epochs
  std::optional<std::uint64_t> seed;    ///< overrides training.seed
  std::optional<std::uint32_t> batch_size;  ///< overrides training.batchSize
  std::optional<float> learning_rate;       ///< overrides training.updater.learningRate
  std::optional<schema::Device> device;  ///< overrides training.device
  std::optional<actors::topology_kind> topology;  ///< overrides distributed.topology
  std::optional<std::uint32_t> fanout;            ///< overrides distributed.fanout
  std::optional<schema::TrainingMode> mode;       ///< overrides distributed.mode
  std::optional<std::uint32_t> averaging_frequency;  ///< overrides distributed.averagingFrequency
  std::optional<schema::KvStoreSync> kvstore;        ///< overrides distributed.kvstore
  std::optional<schema::KvCompression> compression;  ///< overrides distributed.compression
  std::optional<std::uint32_t> replicas;             ///< overrides distributed.replicas
  std::optional<schema::PullPrecision> pull_precision;  ///< overrides distributed.pullPrecision
  std::optional<std::uint32_t> stages;         ///< overrides distributed.stages
  std::optional<std::uint32_t> micro_batches;  ///< overrides distributed.microBatches
  std::optional<std::uint32_t> pipelines;      ///< overrides distributed.pipelines
  std::optional<std::uint32_t> snapshot_every;  ///< overrides distributed.snapshotEvery
  std::optional<std::uint32_t> spares;          ///< overrides distributed.spares
  std::optional<schema::PipelineSchedule> schedule;  ///< overrides distributed.schedule
  std::optional<float> repartition_margin;  ///< overrides distributed.repartitionMargin
  /// Each run saves into a new folder under it (checkpoint_runs.hpp); empty: no checkpoint.
  std::string checkpoint_dir;
  std::uint32_t keep_checkpoints = default_keep_checkpoints;  ///< epoch checkpoints kept; 0: all
  /// The checkpoint the run goes on from (--resume); null: it starts from the beginning.
  std::shared_ptr<const checkpoint_contents> resume;
  training_observer* observer = nullptr;
  observers watch;  ///< metrics and timeline hooks for the run's actors (observation.hpp)
  actors::timing timeouts;  ///< the scheduler's (--stall-warning sets stall_warning)
};

} // namespace strom::runtime
