#pragma once
// Dense layers split into blocks of output columns (issue #20, a layer larger than a node):
// the plan the placer makes for a layer that fits no node, and the network it turns into,
// each planned dense layer replaced by its chain of dense_columns blocks
// (layers/dense_columns.hpp), so that the blocks can be stages of their own. Stage ranges,
// layer costs and layer sizes of a job with a plan all count the blocks as layers.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/partition/column_split.hpp"
#include "strom/compute/partition/layer_costs.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// One dense layer split by output columns.
struct column_plan {
  std::uint32_t layer = 0;  ///< its index among the built layers, counted before any split
  /// Block b holds columns [bounds[b], bounds[b + 1]): 0 first, the layer's units last.
  std::vector<std::uint32_t> bounds;

  friend bool operator==(const column_plan&, const column_plan&) = default;
};

/// Replaces each planned dense layer of `net` by its blocks. Errors name the layer: one that
/// is no dense layer, bounds that do not run from 0 up to its units, plans out of order.
result<void> split_columns(network_layers& net, std::span<const column_plan> plans);

/// The costs of the network split by `plans` (in layer order) from those of the unsplit
/// network: a block computes its share of the layer's columns, keeps its share of the
/// parameters and hands on the layer's input with the columns so far. `inputs` gives each
/// planned layer's input floats per sample, in the plans' order.
layer_costs split_costs(const layer_costs& costs, std::span<const column_plan> plans,
                        std::span<const std::size_t> inputs);

/// Layer `index` (of `layer`'s size) in `blocks` blocks of (nearly) equal columns, each within
/// `budget` (split_output_columns over that many nodes of that budget); the error says what
/// the layer needs and what the blocks would offer.
result<column_plan> plan_columns(std::uint32_t index, const dense_layer_size& layer,
                                 std::size_t blocks, std::uint64_t budget);

} // namespace strom::compute
