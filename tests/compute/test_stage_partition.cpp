#define BOOST_TEST_MODULE compute_stage_partition
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "strom/compute/partition/stage_partition.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

constexpr std::uint64_t plenty = std::uint64_t{1} << 40;

/// Layers costing `seconds` each per sample, no memory.
layer_costs chain(std::vector<double> seconds) {
  layer_costs costs;
  for (double s : seconds)
    costs.layers.push_back({"dense", s, 0, 0, 0, 0, 0});
  return costs;
}

std::vector<std::size_t> layer_counts(const stage_partition& split) {
  std::vector<std::size_t> counts;
  for (const auto& stage : split.stages)
    counts.push_back(stage.end_layer - stage.first_layer);
  return counts;
}

/// The best slowest-stage time over every split into contiguous stages (and, with
/// try_node_orders, every node order), by enumeration.
double brute_force_slowest(const layer_costs& costs, const std::vector<stage_node>& nodes,
                           const stage_partition_options& options) {
  const std::size_t layers = costs.layers.size();
  const std::size_t stages = nodes.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> order(stages);
  std::iota(order.begin(), order.end(), std::size_t{0});
  do {
    // Cuts: every subset of stages - 1 positions among the layers - 1 inner boundaries.
    for (std::uint32_t mask = 0; mask < (1u << (layers - 1)); ++mask) {
      if (static_cast<std::size_t>(__builtin_popcount(mask)) != stages - 1)
        continue;
      std::vector<std::size_t> bounds{0};
      for (std::size_t b = 0; b + 1 < layers; ++b)
        if (mask & (1u << b))
          bounds.push_back(b + 1);
      bounds.push_back(layers);
      double slowest = 0;
      bool fits = true;
      for (std::size_t k = 0; k < stages; ++k) {
        const auto& node = nodes[order[k]];
        const auto plan = plan_stage(costs, bounds[k], bounds[k + 1], node, options);
        fits = fits && plan.memory_bytes <= node.memory_budget;
        slowest = std::max(slowest, plan.predicted_seconds());
      }
      if (fits)
        best = std::min(best, slowest);
    }
  } while (options.try_node_orders && std::next_permutation(order.begin(), order.end()));
  return best;
}

} // namespace

BOOST_AUTO_TEST_CASE(equal_layers_on_equal_nodes_split_in_halves) {
  const std::vector<stage_node> nodes{{"a", 1.0, plenty}, {"b", 1.0, plenty}};
  auto split = partition_stages(chain({1, 1, 1, 1}), nodes, {});
  BOOST_REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.err().message));
  BOOST_TEST((layer_counts(*split) == std::vector<std::size_t>{2, 2}));
  BOOST_TEST(split->slowest_seconds == 2.0);
  BOOST_TEST(split->stages[0].node == 0u);
  BOOST_TEST(split->stages[1].node == 1u);
}

BOOST_AUTO_TEST_CASE(a_node_half_as_fast_gets_a_third_of_the_work) {
  const std::vector<stage_node> nodes{{"fast", 1.0, plenty}, {"slow", 0.5, plenty}};
  auto split = partition_stages(chain({1, 1, 1, 1}), nodes, {});
  BOOST_REQUIRE(split.ok());
  // 3 + 1 layers: times 3 and 2; 2 + 2 would take 4 on the slow node.
  BOOST_TEST((layer_counts(*split) == std::vector<std::size_t>{3, 1}));
  BOOST_TEST(split->slowest_seconds == 3.0);
  BOOST_TEST(split->stages[1].compute_seconds == 2.0);
}

BOOST_AUTO_TEST_CASE(the_fixed_node_order_puts_the_slow_node_first_when_given_first) {
  const std::vector<stage_node> nodes{{"slow", 0.5, plenty}, {"fast", 1.0, plenty}};
  auto split = partition_stages(chain({1, 1, 1, 1}), nodes, {});
  BOOST_REQUIRE(split.ok());
  BOOST_TEST((layer_counts(*split) == std::vector<std::size_t>{1, 3}));
  BOOST_TEST(split->stages[0].node == 0u);
}

BOOST_AUTO_TEST_CASE(trying_node_orders_finds_a_better_order) {
  // A heavy first layer: the fast node must take it, whichever order the nodes came in.
  const std::vector<stage_node> nodes{{"slow", 0.25, plenty}, {"fast", 1.0, plenty}};
  stage_partition_options options;
  options.try_node_orders = true;
  auto split = partition_stages(chain({4, 1}), nodes, options);
  BOOST_REQUIRE(split.ok());
  BOOST_TEST(split->stages[0].node == 1u);
  BOOST_TEST(split->slowest_seconds == 4.0);
  options.try_node_orders = false;
  auto fixed = partition_stages(chain({4, 1}), nodes, options);
  BOOST_REQUIRE(fixed.ok());
  BOOST_TEST(fixed->slowest_seconds == 16.0);
}

BOOST_AUTO_TEST_CASE(activation_transfer_counts_both_ways_at_the_link_bandwidth) {
  layer_costs costs = chain({1, 1});
  costs.layers[0].activation_bytes_per_sample = 100;
  stage_partition_options options;
  options.micro_batch_size = 2;
  options.link_bytes_per_second = 400;  // 2 samples x 100 bytes, out and back: 1 s
  const std::vector<stage_node> nodes{{"a", 1.0, plenty}, {"b", 1.0, plenty}};
  auto split = partition_stages(costs, nodes, options);
  BOOST_REQUIRE(split.ok());
  BOOST_TEST(split->stages[0].transfer_seconds == 1.0);
  BOOST_TEST(split->stages[1].transfer_seconds == 0.0);  // the last stage sends nothing on
  BOOST_TEST(split->slowest_seconds == 3.0);
}

BOOST_AUTO_TEST_CASE(memory_budgets_move_layers_off_a_full_node) {
  // Without the budget 2 + 2 is best; a node that holds one layer's parameters forces 1 + 3.
  layer_costs costs = chain({1, 1, 1, 1});
  for (auto& l : costs.layers)
    l.parameter_bytes = 1000;
  const std::vector<stage_node> nodes{{"small", 1.0, 1500}, {"big", 1.0, plenty}};
  auto split = partition_stages(costs, nodes, {});
  BOOST_REQUIRE(split.ok());
  BOOST_TEST((layer_counts(*split) == std::vector<std::size_t>{1, 3}));
  BOOST_TEST(split->stages[0].memory_bytes == 1000u);
}

BOOST_AUTO_TEST_CASE(activations_in_flight_count_against_the_budget) {
  layer_costs costs = chain({1, 1});
  costs.input_bytes_per_sample = 10;
  costs.layers[0].activation_bytes_per_sample = 20;
  costs.layers[1].activation_bytes_per_sample = 5;
  stage_partition_options options;
  options.micro_batch_size = 4;
  options.micro_batches_in_flight = 3;
  const auto plan = plan_stage(costs, 0, 2, {}, options);
  BOOST_TEST(plan.memory_bytes == (10u + 20u + 5u) * 4u * 3u);
  const auto second = plan_stage(costs, 1, 2, {}, options);
  BOOST_TEST(second.memory_bytes == (20u + 5u) * 4u * 3u);  // its input is layer 0's output
}

BOOST_AUTO_TEST_CASE(a_job_that_fits_nowhere_says_what_it_needs_and_what_each_node_offers) {
  layer_costs costs = chain({1, 1, 1});
  costs.layers[0].parameter_bytes = 6'000'000;
  costs.layers[1].parameter_bytes = 2'000'000;
  costs.layers[2].parameter_bytes = 40'000;
  const std::vector<stage_node> nodes{{"node-a", 1.0, 5'000'000}, {"node-b", 1.0, 7'000'000}};
  auto split = partition_stages(costs, nodes, {});
  BOOST_REQUIRE(!split.ok());
  const auto& message = split.err().message;
  BOOST_TEST_MESSAGE(message);
  BOOST_TEST(message.find("needs 8.0 MB in all") != std::string::npos);
  BOOST_TEST(message.find("its largest layer 6.0 MB alone (layer 0, dense)") != std::string::npos);
  BOOST_TEST(message.find("node-a 5.0 MB, node-b 7.0 MB") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_refused_with_their_values) {
  const std::vector<stage_node> three{{"a", 1.0, plenty}, {"b", 1.0, plenty}, {"c", 1.0, plenty}};
  auto too_many = partition_stages(chain({1, 1}), three, {});
  BOOST_REQUIRE(!too_many.ok());
  BOOST_TEST(too_many.err().message.find("3 stages for 2 layers") != std::string::npos);
  const std::vector<stage_node> still{{"a", 0.0, plenty}};
  auto zero = partition_stages(chain({1}), still, {});
  BOOST_REQUIRE(!zero.ok());
  BOOST_TEST(zero.err().message.find("node 0 has speed 0") != std::string::npos);
  auto none = partition_stages(chain({1}), std::vector<stage_node>{}, {});
  BOOST_TEST(!none.ok());
}

BOOST_AUTO_TEST_CASE(the_dynamic_program_matches_brute_force_on_random_chains) {
  std::mt19937 gen(20);  // fixed seed: the same 400 instances every run
  std::uniform_real_distribution<double> seconds(0.1, 5.0);
  std::uniform_int_distribution<std::uint64_t> bytes(0, 1000);
  std::uniform_int_distribution<std::uint64_t> activation_bytes(0, 100);
  std::uniform_int_distribution<int> layer_count(1, 9);
  const double speeds[] = {0.25, 0.5, 0.75, 1.0};
  std::size_t feasible = 0;
  for (int instance = 0; instance < 400; ++instance) {
    layer_costs costs;
    costs.input_bytes_per_sample = activation_bytes(gen);
    const int layers = layer_count(gen);
    for (int i = 0; i < layers; ++i)
      costs.layers.push_back({"dense", seconds(gen), activation_bytes(gen), bytes(gen),
                              bytes(gen), 0, bytes(gen)});
    const std::size_t stages = 1 + gen() % std::min<std::size_t>(4, layers);
    std::vector<stage_node> nodes;
    for (std::size_t k = 0; k < stages; ++k)
      nodes.push_back({"", speeds[gen() % 4], 2000 + gen() % 8000});
    stage_partition_options options;
    options.micro_batch_size = 1 + gen() % 4;
    options.micro_batches_in_flight = 1 + gen() % 3;
    options.link_bytes_per_second = (gen() % 2 == 0) ? 0.0 : 500.0;
    options.try_node_orders = gen() % 2 == 0;
    const double expected = brute_force_slowest(costs, nodes, options);
    auto split = partition_stages(costs, nodes, options);
    if (expected == std::numeric_limits<double>::infinity()) {
      BOOST_TEST(!split.ok(), "instance " << instance);
      continue;
    }
    ++feasible;
    BOOST_REQUIRE_MESSAGE(split.ok(), "instance " << instance << ": "
                                                  << (split.ok() ? "" : split.err().message));
    BOOST_TEST(split->slowest_seconds == expected, boost::test_tools::tolerance(1e-12));
    // The split itself is consistent: contiguous, covering, within budgets, its own time.
    std::size_t next = 0;
    double slowest = 0;
    for (const auto& stage : split->stages) {
      BOOST_TEST(stage.first_layer == next);
      BOOST_TEST(stage.end_layer > stage.first_layer);
      BOOST_TEST(stage.memory_bytes <= nodes[stage.node].memory_budget);
      slowest = std::max(slowest, stage.predicted_seconds());
      next = stage.end_layer;
    }
    BOOST_TEST(next == costs.layers.size());
    BOOST_TEST(slowest == split->slowest_seconds);
  }
  BOOST_TEST_MESSAGE(feasible << " of 400 instances fit");
  BOOST_TEST(feasible > 100u);  // the budgets are tight enough to matter, loose enough to fit
  BOOST_TEST(feasible < 400u);
}
