#include "strom/compute/partition/column_split.hpp"

#include <fmt/format.h>

#include <cmath>

#include "strom/compute/memory_estimate.hpp"
#include "strom/compute/saturating.hpp"

namespace strom::compute {

namespace {

/// Bytes one more column adds: its weights and its bias.
std::uint64_t bytes_per_column(const dense_layer_size& layer) {
  return saturating_mul(saturating_add(layer.inputs, 1), layer.bytes_per_parameter);
}

/// Columns that fit `budget`, at most `outputs`.
std::size_t columns_that_fit(const dense_layer_size& layer, std::uint64_t budget) {
  if (budget < layer.fixed_bytes)
    return 0;
  const std::uint64_t per_column = bytes_per_column(layer);
  if (per_column == 0)
    return layer.outputs;
  return static_cast<std::size_t>(
    std::min<std::uint64_t>((budget - layer.fixed_bytes) / per_column, layer.outputs));
}

} // namespace

std::uint64_t column_bytes(const dense_layer_size& layer, std::size_t columns) {
  if (columns == 0)
    return 0;
  return saturating_add(layer.fixed_bytes, saturating_mul(bytes_per_column(layer), columns));
}

result<std::vector<column_range>> split_output_columns(const dense_layer_size& layer,
                                                       std::span<const stage_node> nodes) {
  if (nodes.empty())
    return error{"column split: no nodes to split the layer across"};
  std::vector<std::size_t> room(nodes.size());
  std::uint64_t total_room = 0;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (!(nodes[n].speed > 0) || !std::isfinite(nodes[n].speed))
      return error{fmt::format("column split: node {} has speed {}; it must be positive", n,
                               nodes[n].speed)};
    room[n] = columns_that_fit(layer, nodes[n].memory_budget);
    total_room += room[n];
  }
  if (total_room < layer.outputs) {
    std::string offers;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      offers += fmt::format("{}{} {} ({} columns)", n == 0 ? "" : ", ", node_label(nodes, n),
                            bytes_text(nodes[n].memory_budget), room[n]);
    return error{fmt::format(
      "column split: a dense layer of {} inputs and {} outputs needs {} on one node and {} a "
      "column beyond the {} every node holds; the nodes offer: {}",
      layer.inputs, layer.outputs, bytes_text(column_bytes(layer, layer.outputs)),
      bytes_text(bytes_per_column(layer)), bytes_text(layer.fixed_bytes),
      offers)};
  }
  std::vector<std::size_t> share(nodes.size(), 0);
  for (std::size_t column = 0; column < layer.outputs; ++column) {
    std::size_t chosen = nodes.size();
    double chosen_finish = 0;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (share[n] == room[n])
        continue;
      const double finish = static_cast<double>(share[n] + 1) / nodes[n].speed;
      if (chosen == nodes.size() || finish < chosen_finish) {
        chosen = n;
        chosen_finish = finish;
      }
    }
    ++share[chosen];  // total_room >= outputs: some node always has room
  }
  std::vector<column_range> ranges;
  std::size_t begin = 0;
  for (auto columns : share) {
    ranges.push_back({begin, begin + columns});
    begin += columns;
  }
  return ranges;
}

} // namespace strom::compute
