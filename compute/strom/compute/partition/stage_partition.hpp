#pragma once
// Splits a chain of layers into K contiguous pipeline stages, one per node, minimising the
// slowest stage's time under every node's memory budget (LightDNN's speed- and memory-aware
// partition). Exact: dynamic programming over (layer prefix, stage), O(K * n^2) for n layers.
//
// Stage i runs on nodes[i]: the DP keeps the node order fixed, because the order decides
// which links activations cross and a caller may know it (racks, a scheduler's placement).
// With `try_node_orders` it also tries every order of the nodes (K! DP runs) while K is at
// most max_ordered_stages.
//
// A stage's time, per micro-batch: its layers' forward+backward time at its node's speed,
// plus, for every stage but the last, sending its output activations downstream and
// receiving their gradients back (the same size) over the link. A stage's memory: its
// layers' resident bytes (parameters, gradients, state, updater state) plus, for each
// micro-batch in flight, its input and every layer's output (kept for the backward pass).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strom/compute/partition/layer_costs.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Node orders are tried exhaustively up to this many stages: 6! = 720 DP runs of
/// O(K * n^2) each stay in milliseconds for a 100-layer chain; beyond it the given order is
/// kept (a caller with more stages orders the nodes itself, e.g. fastest first).
inline constexpr std::size_t max_ordered_stages = 6;

/// A node a stage can run on.
struct stage_node {
  std::string name;                   ///< for reports and errors
  double speed = 1.0;                 ///< relative: 0.5 takes twice as long as 1.0
  std::uint64_t memory_budget = 0;    ///< bytes strom may place there
};

/// How stages run.
struct stage_partition_options {
  std::uint32_t micro_batch_size = 1;         ///< samples per micro-batch
  std::uint32_t micro_batches_in_flight = 1;  ///< activations kept per stage (1F1B: up to K)
  double link_bytes_per_second = 0;           ///< between stages; 0: transfers cost nothing
  bool try_node_orders = false;               ///< also choose which node runs which stage
};

/// One stage of the chosen split.
struct stage_plan {
  std::size_t first_layer = 0;     ///< layers [first_layer, end_layer)
  std::size_t end_layer = 0;
  std::size_t node = 0;            ///< index into the nodes given
  double compute_seconds = 0;      ///< per micro-batch, at the node's speed
  double transfer_seconds = 0;     ///< per micro-batch: activations out, their gradients back
  std::uint64_t memory_bytes = 0;  ///< resident plus activations in flight

  /// Predicted time per micro-batch.
  double predicted_seconds() const noexcept { return compute_seconds + transfer_seconds; }
};

/// The chosen split.
struct stage_partition {
  std::vector<stage_plan> stages;  ///< first to last
  double slowest_seconds = 0;      ///< the largest predicted_seconds of the stages
};

/// The split of `costs` into nodes.size() stages that minimises the slowest stage's time
/// while every stage fits its node's memory budget. Fails when there are no nodes, more
/// nodes than layers, a speed that is not positive, or when no split fits: then the message
/// says what the model needs (in all, and its largest layer alone) and what each node offers.
result<stage_partition> partition_stages(const layer_costs& costs,
                                         std::span<const stage_node> nodes,
                                         const stage_partition_options& options);

/// How messages name node `index`: its name, or "node INDEX" when it has none.
std::string node_label(std::span<const stage_node> nodes, std::size_t index);

/// Time per micro-batch of layers [first, end) on `node` (compute plus transfer unless `end`
/// is the last layer); shared by the partitioner and its checks.
stage_plan plan_stage(const layer_costs& costs, std::size_t first, std::size_t end,
                      const stage_node& node, const stage_partition_options& options);

} // namespace strom::compute
