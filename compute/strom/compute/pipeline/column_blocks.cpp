#include "strom/compute/pipeline/column_blocks.hpp"

#include <fmt/format.h>

#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dense_columns.hpp"

namespace strom::compute {

result<void> split_columns(network_layers& net, std::span<const column_plan> plans) {
  std::vector<std::unique_ptr<layer>> layers;
  std::size_t next = 0;  // the next plan
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    if (next == plans.size() || plans[next].layer != i) {
      layers.push_back(std::move(net.layers[i]));
      continue;
    }
    const auto& plan = plans[next++];
    const auto* whole = dynamic_cast<const dense*>(net.layers[i].get());
    if (!whole)
      return error{fmt::format("layer {} ({}) is split by columns, and only a dense layer can "
                               "be", i, net.layers[i]->kind())};
    const auto& b = plan.bounds;
    if (b.size() < 2 || b.front() != 0 || b.back() != whole->units())
      return error{fmt::format("layer {}: its column blocks must run from 0 to its {} units",
                               i, whole->units())};
    for (std::size_t k = 0; k + 1 < b.size(); ++k) {
      if (b[k] >= b[k + 1])
        return error{fmt::format("layer {}: column block {} is [{}, {})", i, k, b[k], b[k + 1])};
      layers.push_back(std::make_unique<dense_columns>(whole->inputs(), whole->units(), b[k],
                                                       b[k + 1], whole->init()));
    }
  }
  if (next != plans.size())
    return error{fmt::format("a column split of layer {} in a network of {} layers (or out of "
                             "order)", plans[next].layer, net.layers.size())};
  net.layers = std::move(layers);
  return success();
}

layer_costs split_costs(const layer_costs& costs, std::span<const column_plan> plans,
                        std::span<const std::size_t> inputs) {
  layer_costs out;
  out.input_bytes_per_sample = costs.input_bytes_per_sample;
  std::size_t next = 0;
  for (std::size_t i = 0; i < costs.layers.size(); ++i) {
    const auto& whole = costs.layers[i];
    if (next == plans.size() || plans[next].layer != i) {
      out.layers.push_back(whole);
      continue;
    }
    const auto& b = plans[next].bounds;
    const double units = b.back();
    const std::uint64_t input_bytes = inputs[next] * sizeof(float);
    ++next;
    for (std::size_t k = 0; k + 1 < b.size(); ++k) {
      const double share = (b[k + 1] - b[k]) / units;
      const auto part = [share](std::uint64_t bytes) {
        return static_cast<std::uint64_t>(static_cast<double>(bytes) * share);
      };
      layer_cost block = whole;
      block.kind = "dense_columns";
      block.seconds_per_sample = whole.seconds_per_sample * share;
      // The last block hands on the layer's output; the others the input and the columns.
      block.activation_bytes_per_sample =
        k + 2 == b.size() ? whole.activation_bytes_per_sample
                          : input_bytes + b[k + 1] * sizeof(float);
      block.parameter_bytes = part(whole.parameter_bytes);
      block.gradient_bytes = part(whole.gradient_bytes);
      block.updater_state_bytes = part(whole.updater_state_bytes);
      out.layers.push_back(block);
    }
  }
  return out;
}

result<column_plan> plan_columns(std::uint32_t index, const dense_layer_size& layer,
                                 std::size_t blocks, std::uint64_t budget) {
  const std::vector<stage_node> nodes(blocks, stage_node{"", 1.0, budget});
  auto ranges = split_output_columns(layer, nodes);
  if (!ranges)
    return ranges.err();
  column_plan plan{index, {0}};
  for (const auto& range : *ranges)
    if (range.size() > 0)
      plan.bounds.push_back(static_cast<std::uint32_t>(range.end));
  return plan;
}

} // namespace strom::compute
