#pragma once
// The outcome of a training run: what `--metrics-out` writes and what the scheduler sends a
// client when a job ends. It lives with the actors because it travels between nodes.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/actors/sharing/tensor_sharing.hpp"

namespace strom::actors {

/// The topology a run's frames travelled (topology.hpp), as metrics show it.
struct topology_summary {
  std::string kind = "plain";  ///< "plain" or "mesh"
  std::uint32_t fanout = 8;    ///< children a node may have in a mesh
  std::uint64_t version = 1;   ///< the plan's version at the end (one more per remap)
  std::uint32_t max_links = 0; ///< the most neighbours any relay sent to
};

/// A pipeline job's figures (mode "pipeline", issue #20); empty in the other modes.
struct pipeline_summary {
  std::uint32_t stages = 0;
  std::uint32_t micro_batches = 0;  ///< per minibatch
  std::uint32_t pipelines = 0;      ///< copies of the pipeline (1 so far)
  /// Each stage's layers [first, end), as the built layers count them (a dense layer split
  /// by columns counts each block).
  std::vector<std::vector<std::uint32_t>> stage_layers;
  /// Dense layers split into blocks of output columns: the layer, then the blocks' bounds.
  std::vector<std::vector<std::uint32_t>> column_splits;
  std::vector<std::uint64_t> stage_nodes;  ///< by stage: the node running it (copy 1's)
  std::vector<double> stage_seconds;            ///< by stage: busy seconds per minibatch
  std::vector<double> stage_seconds_predicted;  ///< by stage: the partitioner's, per minibatch
  double bubble_fraction = 0.0;        ///< the stages' measured idle share of the epochs
  double bubble_fraction_ideal = 0.0;  ///< GPipe's (K-1)/(M+K-1)
  std::uint64_t activation_bytes = 0;  ///< frame bytes of activations and their gradients
  std::uint32_t stage_restores = 0;    ///< stages re-spawned after a loss
  std::uint32_t repartitions = 0;      ///< times the layers were split again (speed drift)
};

/// The outcome of a training run.
struct training_report {
  std::string job;
  double test_accuracy = -1.0;  ///< -1 without a test set (null in JSON, as is test_loss)
  double test_loss = 0.0;
  double final_loss = 0.0;  ///< mean training loss of the last epoch
  std::uint32_t epochs = 0;
  std::uint32_t workers = 1;
  std::uint32_t nodes = 1;
  double wall_seconds = 0.0;   ///< the whole run, data loading and evaluation included
  double train_seconds = 0.0;  ///< the training loop only
  std::uint64_t train_samples = 0;
  double train_samples_per_second = 0.0;  ///< train_samples / train_seconds
  std::uint64_t iterations = 0;
  std::string checkpoint;  ///< path of the final checkpoint, empty if none

  // -- gradient sharing (zero when one worker trains alone) ---------------------------------
  std::uint64_t bytes_sent = 0;                 ///< update-frame bytes put on the wire, all nodes
  std::uint64_t dense_bytes_equivalent = 0;     ///< what dense fp32 updates would have sent
  std::uint64_t updates_applied = 0;            ///< frames applied, summed over workers
  std::uint64_t duplicate_updates_dropped = 0;  ///< dropped by relays
  std::uint64_t duplicate_updates_applied = 0;  ///< must stay 0
  std::uint64_t frames_rejected = 0;            ///< unreadable frames dropped
  double mean_density = 0.0;                    ///< values sent per element, per worker update
  double final_threshold = 0.0;                 ///< the encoder's threshold at the end
  /// Each tensor's sharing, summed over the workers (metrics `sharing_layers`).
  std::vector<tensor_sharing> sharing_layers;
  // -- parameter averaging (mode "averaging") ------------------------------------------------
  std::string mode = "shared";              ///< shared (updates) or averaging (parameters)
  /// Where the workers' steps ran: "cpu" or the GPU, e.g. "cuda:0 (NVIDIA H200)"; nodes that
  /// differ are listed, comma-separated.
  std::string device = "cpu";
  std::uint32_t averaging_frequency = 0;    ///< steps between averages (averaging)
  std::uint64_t averaging_rounds = 0;       ///< averages every worker took part in
  std::uint64_t averaging_bytes = 0;        ///< sum and total frame bytes the relays sent
  // -- parameter servers (mode "kvstore") ----------------------------------------------------
  std::string kvstore;                   ///< "dist_sync" or "dist_async"; empty otherwise
  std::uint32_t servers = 0;             ///< server nodes
  std::uint32_t replicas = 0;            ///< servers that hold each key range
  std::uint64_t push_bytes = 0;          ///< frame bytes the workers pushed
  std::uint64_t push_dense_bytes = 0;    ///< what fp32 pushes would have been
  std::uint64_t pull_bytes = 0;          ///< frame bytes of the shards' answers the workers took
  std::uint64_t server_updates = 0;      ///< optimizer steps (or sums) over all shards
  std::uint32_t server_failovers = 0;    ///< server nodes lost and replaced
  // -- membership (a cluster job) ------------------------------------------------------------
  std::uint32_t nodes_lost = 0;      ///< nodes lost while the job ran
  std::uint32_t nodes_restored = 0;  ///< nodes brought back in while the job ran
  std::uint32_t nodes_joined = 0;    ///< new nodes that joined the job while it ran
  double failure_detection_seconds = 0.0;  ///< the longest, last sign of life to loss
  double restore_seconds = 0.0;      ///< the longest, join to first step
  std::uint32_t scheduler_restarts = 0;
  std::uint32_t job_restarts = 0;    ///< started again from its latest checkpoint (max_restarts)
  std::uint64_t samples_redone = 0;  ///< trained by a lost node, its update lost, trained again
  topology_summary topology;
  pipeline_summary pipeline;
};

/// What one epoch's training steps added up to, over all workers.
struct epoch_totals {
  double loss_sum = 0.0;  ///< sum of the batches' mean losses
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  double seconds = 0.0;  ///< training time of the epoch
};

/// A model's quality on the test set after an epoch (accuracy -1: no test set).
struct test_result {
  double accuracy = -1.0;
  double loss = 0.0;
};

/// `to` takes `from`'s counts of faults and recoveries: a job that starts again from its
/// checkpoint (max_restarts) still counts what it went through since.
inline void carry_faults(training_report& to, const training_report& from) {
  to.nodes_lost = from.nodes_lost;
  to.nodes_restored = from.nodes_restored;
  to.nodes_joined = from.nodes_joined;
  to.failure_detection_seconds = from.failure_detection_seconds;
  to.restore_seconds = from.restore_seconds;
  to.samples_redone = from.samples_redone;
}

template <class F>
typename F::result_type inspect(F& f, training_report& x) {
  return f(caf::meta::type_name("training_report"), x.job, x.test_accuracy, x.test_loss,
           x.final_loss, x.epochs, x.workers, x.nodes, x.wall_seconds, x.train_seconds,
           x.train_samples, x.train_samples_per_second, x.iterations, x.checkpoint, x.bytes_sent,
           x.dense_bytes_equivalent, x.updates_applied, x.duplicate_updates_dropped,
           x.duplicate_updates_applied, x.frames_rejected, x.mean_density, x.final_threshold,
           x.nodes_lost, x.nodes_restored, x.nodes_joined, x.failure_detection_seconds,
           x.restore_seconds, x.scheduler_restarts, x.job_restarts, x.samples_redone, x.topology,
           x.mode, x.averaging_frequency, x.averaging_rounds, x.averaging_bytes, x.kvstore,
           x.servers, x.replicas, x.push_bytes, x.push_dense_bytes, x.pull_bytes,
           x.server_updates, x.server_failovers, x.pipeline, x.sharing_layers, x.device);
}

template <class F>
typename F::result_type inspect(F& f, pipeline_summary& x) {
  return f(caf::meta::type_name("pipeline_summary"), x.stages, x.micro_batches, x.pipelines,
           x.stage_layers, x.column_splits, x.stage_nodes, x.stage_seconds, x.stage_seconds_predicted,
           x.bubble_fraction,
           x.bubble_fraction_ideal, x.activation_bytes, x.stage_restores, x.repartitions);
}

template <class F>
typename F::result_type inspect(F& f, topology_summary& x) {
  return f(caf::meta::type_name("topology_summary"), x.kind, x.fanout, x.version, x.max_links);
}

template <class F>
typename F::result_type inspect(F& f, epoch_totals& x) {
  return f(caf::meta::type_name("epoch_totals"), x.loss_sum, x.batches, x.samples, x.seconds);
}

template <class F>
typename F::result_type inspect(F& f, test_result& x) {
  return f(caf::meta::type_name("test_result"), x.accuracy, x.loss);
}

} // namespace strom::actors
