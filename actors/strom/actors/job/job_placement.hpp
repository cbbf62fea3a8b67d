#pragma once
// Where a job's parts go, decided once before a job_master assigns anything: whether every
// node's memory budget (--memory-limit) holds what the job places there, and, for a pipeline
// job (issue #20), which layers each stage runs on which node. Deciding needs the job parsed
// and its layers profiled, which actors do not do: the runtime hands the scheduler a placer
// (runtime/node/pipeline_setup.hpp), and a job that fits nowhere fails at once with its message.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strom/actors/messages.hpp"
#include "strom/compute/result.hpp"

namespace strom::actors {

/// One pipeline stage as placed.
struct stage_placement {
  std::uint32_t first_layer = 0;  ///< layers [first_layer, end_layer)
  std::uint32_t end_layer = 0;
  std::uint32_t node = 0;             ///< index into the job's nodes
  double predicted_seconds = 0.0;     ///< per minibatch, at the node's speed
  std::uint64_t memory_bytes = 0;     ///< what it places on its node (partition's estimate)
};

/// A job's placement.
struct job_placement {
  std::string job_name;
  std::uint32_t epochs = 0;
  std::uint32_t micro_batches = 0;     ///< a pipeline job's, per minibatch
  std::uint32_t batch_size = 0;        ///< samples a minibatch
  std::uint32_t pipelines = 1;         ///< copies of the pipeline (--pipelines)
  /// The stages are split again once their measured times over their predictions differ by
  /// more than this share (distributed.repartitionMargin); 0: never (a speed-blind split).
  double repartition_margin = 0.0;
  /// Every copy's stages, copy by copy (copy r's stage s at r * stages + s); empty: the job
  /// is no pipeline job.
  std::vector<stage_placement> stages;
  /// Dense layers too large for a node, split into blocks of output columns; the stages'
  /// layer ranges count the blocks as layers.
  std::vector<compute::column_plan> column_plans;
};

/// Each stage's speed correction after an epoch in which stage t was busy `busy_seconds[t]`
/// over `steps` minibatches (one copy of the pipeline): when the stages' measured times over
/// their predictions differ by more than `placement.repartition_margin`, a node's speed
/// drifted against the others, and stage t's node's speed is to be scaled by the least
/// drifted stage's ratio over its own (at most 1, so a speed factor stays in (0, 1]).
/// nullopt: no drift beyond the margin, a margin of 0, several copies, or nothing measured.
std::optional<std::vector<double>> speed_corrections(const job_placement& placement,
                                                     std::span<const double> busy_seconds,
                                                     std::uint64_t steps);

/// Places a submission on its worker nodes (by rank), or says why it fits nowhere.
using job_placer =
  std::function<result<job_placement>(const job_submission&, const std::vector<node_status>&)>;

} // namespace strom::actors
