#include "strom/compute/partition/stage_partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "strom/compute/memory_estimate.hpp"
#include "strom/compute/saturating.hpp"

namespace strom::compute {

namespace {

constexpr double infeasible = std::numeric_limits<double>::infinity();

/// Bytes one sample's input to layer `first` takes.
std::uint64_t input_bytes(const layer_costs& costs, std::size_t first) {
  return first == 0 ? costs.input_bytes_per_sample
                    : costs.layers[first - 1].activation_bytes_per_sample;
}

/// The plans of every stage [i, j) on every node, computed once for all node orders.
class plan_table {
public:
  plan_table(const layer_costs& costs, std::span<const stage_node> nodes,
             const stage_partition_options& options)
    : layers_(costs.layers.size()), plans_(nodes.size() * (layers_ + 1) * (layers_ + 1)) {
    for (std::size_t node = 0; node < nodes.size(); ++node)
      for (std::size_t i = 0; i < layers_; ++i)
        for (std::size_t j = i + 1; j <= layers_; ++j) {
          auto plan = plan_stage(costs, i, j, nodes[node], options);
          plan.node = node;
          at(node, i, j) = plan;
        }
  }

  const stage_plan& at(std::size_t node, std::size_t i, std::size_t j) const {
    return plans_[(node * (layers_ + 1) + i) * (layers_ + 1) + j];
  }

private:
  stage_plan& at(std::size_t node, std::size_t i, std::size_t j) {
    return plans_[(node * (layers_ + 1) + i) * (layers_ + 1) + j];
  }

  std::size_t layers_;
  std::vector<stage_plan> plans_;
};

/// The best split with stage k on nodes[order[k]], or an empty partition when none fits.
stage_partition best_split(const plan_table& plans, std::span<const stage_node> nodes,
                           std::span<const std::size_t> order, std::size_t layers) {
  const std::size_t stages = order.size();
  // slowest[k][j]: the least slowest-stage time of layers [0, j) in stages [0, k).
  std::vector<std::vector<double>> slowest(stages + 1, std::vector<double>(layers + 1, infeasible));
  std::vector<std::vector<std::size_t>> cut(stages + 1, std::vector<std::size_t>(layers + 1, 0));
  slowest[0][0] = 0;
  for (std::size_t k = 1; k <= stages; ++k) {
    const std::size_t node = order[k - 1];
    // Every stage holds at least one layer: k stages cover at least k layers, and leave at
    // least one for each later stage.
    for (std::size_t j = k; j + (stages - k) <= layers; ++j)
      for (std::size_t i = k - 1; i < j; ++i) {
        if (slowest[k - 1][i] == infeasible)
          continue;
        const auto& plan = plans.at(node, i, j);
        if (plan.memory_bytes > nodes[node].memory_budget)
          continue;
        const double candidate = std::max(slowest[k - 1][i], plan.predicted_seconds());
        if (candidate < slowest[k][j]) {  // strict: the earliest cut wins a tie
          slowest[k][j] = candidate;
          cut[k][j] = i;
        }
      }
  }
  stage_partition split;
  if (slowest[stages][layers] == infeasible)
    return split;
  split.slowest_seconds = slowest[stages][layers];
  split.stages.resize(stages);
  for (std::size_t k = stages, j = layers; k > 0; --k) {
    const std::size_t i = cut[k][j];
    split.stages[k - 1] = plans.at(order[k - 1], i, j);
    j = i;
  }
  return split;
}

/// What the model needs and what each node offers, for the error when nothing fits.
std::string nothing_fits_text(const layer_costs& costs, std::span<const stage_node> nodes,
                              const stage_partition_options& options) {
  const auto whole = plan_stage(costs, 0, costs.layers.size(), {}, options);
  std::uint64_t largest = 0;
  std::size_t largest_layer = 0;
  for (std::size_t i = 0; i < costs.layers.size(); ++i) {
    const auto alone = plan_stage(costs, i, i + 1, {}, options).memory_bytes;
    if (alone > largest) {
      largest = alone;
      largest_layer = i;
    }
  }
  std::string offers;
  for (std::size_t n = 0; n < nodes.size(); ++n)
    offers += fmt::format("{}{} {}", n == 0 ? "" : ", ", node_label(nodes, n),
                          bytes_text(nodes[n].memory_budget));
  return fmt::format(
    "no split of {} layers into {} stages fits the nodes' memory: the model needs {} in all "
    "(parameters, gradients, updater state and the activations of {} micro-batch{} of {} "
    "sample{} in flight), its largest layer {} alone (layer {}, {}); the nodes offer: {}",
    costs.layers.size(), nodes.size(), bytes_text(whole.memory_bytes),
    options.micro_batches_in_flight, options.micro_batches_in_flight == 1 ? "" : "es",
    options.micro_batch_size, options.micro_batch_size == 1 ? "" : "s", bytes_text(largest),
    largest_layer, costs.layers[largest_layer].kind, offers);
}

} // namespace

std::string node_label(std::span<const stage_node> nodes, std::size_t index) {
  return nodes[index].name.empty() ? fmt::format("node {}", index) : nodes[index].name;
}

stage_plan plan_stage(const layer_costs& costs, std::size_t first, std::size_t end,
                      const stage_node& node, const stage_partition_options& options) {
  stage_plan plan;
  plan.first_layer = first;
  plan.end_layer = end;
  double seconds_per_sample = 0;
  std::uint64_t resident = 0;
  std::uint64_t kept_per_sample = input_bytes(costs, first);
  for (std::size_t i = first; i < end; ++i) {
    const auto& l = costs.layers[i];
    seconds_per_sample += l.seconds_per_sample;
    resident = saturating_add(resident, l.resident_bytes());
    kept_per_sample = saturating_add(kept_per_sample, l.activation_bytes_per_sample);
  }
  const double micro = options.micro_batch_size;
  plan.compute_seconds = seconds_per_sample * micro / node.speed;
  if (end < costs.layers.size() && options.link_bytes_per_second > 0)
    plan.transfer_seconds = 2.0 * static_cast<double>(input_bytes(costs, end)) * micro
                            / options.link_bytes_per_second;
  const std::uint64_t in_flight =
    saturating_mul(options.micro_batch_size, options.micro_batches_in_flight);
  plan.memory_bytes = saturating_add(resident, saturating_mul(kept_per_sample, in_flight));
  return plan;
}

result<stage_partition> partition_stages(const layer_costs& costs,
                                         std::span<const stage_node> nodes,
                                         const stage_partition_options& options) {
  const std::size_t layers = costs.layers.size();
  if (nodes.empty())
    return error{"stage partition: no nodes to place stages on"};
  if (nodes.size() > layers)
    return error{fmt::format("stage partition: {} stages for {} layers; every stage needs at "
                             "least one layer", nodes.size(), layers)};
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (!(nodes[n].speed > 0) || !std::isfinite(nodes[n].speed))
      return error{fmt::format("stage partition: node {} has speed {}; it must be positive",
                               n, nodes[n].speed)};

  const plan_table plans(costs, nodes, options);
  std::vector<std::size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const bool every_order = options.try_node_orders && nodes.size() <= max_ordered_stages;
  stage_partition best;
  do {
    auto split = best_split(plans, nodes, order, layers);
    if (!split.stages.empty()
        && (best.stages.empty() || split.slowest_seconds < best.slowest_seconds))
      best = std::move(split);
  } while (every_order && std::next_permutation(order.begin(), order.end()));
  if (best.stages.empty())
    return error{"stage partition: " + nothing_fits_text(costs, nodes, options)};
  return best;
}

} // namespace strom::compute
