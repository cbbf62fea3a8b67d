#pragma once
// A dense layer too large for one node's memory budget is split by output columns across
// nodes (LightDNN runs large fully connected layers model-parallel): every node holds the
// whole input and the weights and bias of its own columns and computes its columns of the
// output (the placer chains them as pipeline layers: pipeline/column_blocks.hpp). Columns are
// given out so that the slowest node finishes first (each column costs the same time), never
// past a node's budget.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strom/compute/partition/stage_partition.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Output columns [begin, end) of a split dense layer.
struct column_range {
  std::size_t begin = 0;
  std::size_t end = 0;

  std::size_t size() const noexcept { return end - begin; }
};

/// A dense layer's size, and what each of its parameters costs where it lies.
struct dense_layer_size {
  std::size_t inputs = 0;                 ///< input floats per sample
  std::size_t outputs = 0;                ///< output columns
  std::uint64_t bytes_per_parameter = 0;  ///< value, gradient, updater state (Adam: 16)
  std::uint64_t fixed_bytes = 0;          ///< what each node holds whatever its share (input)
};

/// Bytes `columns` columns take on a node: fixed_bytes plus (inputs + 1) parameters a column
/// (its weights and its bias); nothing for no columns (the node takes no part).
std::uint64_t column_bytes(const dense_layer_size& layer, std::size_t columns);

/// One contiguous range of output columns per node, in node order, covering every column;
/// a node may get none. Columns go one by one to the node that would finish soonest with one
/// more (columns / speed), among those with room in their budget, which minimises the slowest
/// node's share. Fails, naming what the layer needs and what each node offers, when the
/// budgets together cannot hold it, or for a speed that is not positive.
result<std::vector<column_range>> split_output_columns(const dense_layer_size& layer,
                                                       std::span<const stage_node> nodes);

} // namespace strom::compute
