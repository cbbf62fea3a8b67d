#include "strom/compute/partition/speed_probe.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "strom/compute/layers/dense.hpp"
#include "strom/compute/random.hpp"

namespace strom::compute {

namespace {

constexpr std::size_t probe_batch = 64;
constexpr std::size_t probe_inputs = 784;
constexpr std::size_t probe_units = 256;

} // namespace

double measure_compute_rate(const std::function<double()>& seconds_now, std::uint32_t rounds) {
  if (!seconds_now || rounds == 0)
    throw std::invalid_argument("measure_compute_rate: needs a clock and at least one round");
  dense layer{{probe_inputs, 1, 1}, probe_units, weight_init::he};
  std::vector<float> parameters(layer.parameter_count());
  std::vector<float> gradients(parameters.size());
  rng gen{1};
  layer.initialize(parameters, {}, gen);
  layer.bind(parameters, gradients, {});
  layer.reserve(probe_batch);
  std::vector<float> input(probe_batch * probe_inputs);
  for (auto& value : input)
    value = gen.uniform(-1.0f, 1.0f);
  std::vector<float> output(probe_batch * probe_units);
  std::vector<float> input_gradient(input.size());
  double fastest = std::numeric_limits<double>::infinity();
  for (std::uint32_t round = 0; round <= rounds; ++round) {  // round 0: warm-up
    const double start = seconds_now();
    layer.forward(input, output, probe_batch, pass::training);
    layer.backward(input, output, output, input_gradient, probe_batch);
    if (round > 0)
      fastest = std::min(fastest, seconds_now() - start);
  }
  // Three gemms of batch x inputs x units multiply-adds: forward, weight and input gradients.
  const double operations = 3.0 * 2.0 * probe_batch * probe_inputs * probe_units;
  return operations / std::max(fastest, 1e-9);
}

} // namespace strom::compute
