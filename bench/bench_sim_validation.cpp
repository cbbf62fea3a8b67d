// The model against live mode (issue #18: "for 1, 2, 4 and 8 nodes on this machine, predicted
// samples/s within 20% of the live mode's measurement, reported side by side"): the scenario
// examples/sim/scaling_4_nodes.scenario with its node count set to each, run in both modes
// with one seed. Prints one JSON object a node count, then a summary line.
//   build/bench/bench_sim_validation [SCENARIO]

#include <fmt/format.h>

#include "json_line.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include "strom/runtime/sim/run_scenario.hpp"

int main(int argc, char** argv) {
  using namespace strom::runtime::sim;
  using strom::bench::print_json;
  using strom::bench::rounded;
  const std::string path =
    argc > 1 ? argv[1] : std::string{STROM_SOURCE_DIR} + "/examples/sim/scaling_4_nodes.scenario";
  constexpr double bar = 0.20;
  auto loaded = load_scenario_file(path);
  if (!loaded) {
    fmt::print(stderr, "bench_sim_validation: {}\n", loaded.err().message);
    return 1;
  }
  bool all_within = true;
  for (std::size_t nodes : {1, 2, 4, 8}) {
    scenario s = *loaded;
    const auto node = s.nodes.front();
    s.nodes.assign(nodes, node);
    for (std::size_t i = 0; i < nodes; ++i)
      s.nodes[i].name = fmt::format("n{}", i + 1);
    double sps[2] = {0, 0};
    double wall[2] = {0, 0};
    for (auto mode : {sim_mode::live, sim_mode::model}) {
      run_options options;
      options.mode = mode;
      options.seed = 7;
      const auto start = std::chrono::steady_clock::now();
      auto ran = run_scenario(s, options);
      if (!ran) {
        fmt::print(stderr, "bench_sim_validation: {} nodes, {}: {}\n", nodes, to_string(mode),
                   ran.err().message);
        return 1;
      }
      const auto i = mode == sim_mode::live ? 0 : 1;
      sps[i] = ran->model.samples_per_second;
      wall[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double ratio = sps[1] / sps[0];
    const bool within = std::abs(ratio - 1) <= bar;
    all_within &= within;
    print_json({{"nodes", nodes}, {"live_samples_per_second", rounded(sps[0], 1)},
                {"model_samples_per_second", rounded(sps[1], 1)},
                {"model_over_live", rounded(ratio, 4)}, {"within_20_percent", within},
                {"live_wall_seconds", rounded(wall[0], 2)},
                {"model_wall_seconds", rounded(wall[1], 3)}});
  }
  print_json({{"scenario", path}, {"all_within_20_percent", all_within}});
  return all_within ? 0 : 1;
}
