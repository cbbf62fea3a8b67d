#include "strom/compute/layers/weight_init.hpp"

#include <cmath>

namespace strom::compute {

namespace {

void fill_normal(std::span<float> weights, double stddev, rng& gen) {
  for (auto& w : weights)
    w = static_cast<float>(stddev * gen.normal());
}

void fill_uniform(std::span<float> weights, double limit, rng& gen) {
  const auto bound = static_cast<float>(limit);
  for (auto& w : weights)
    w = gen.uniform(-bound, bound);
}

} // namespace

void fill_weights(std::span<float> weights, weight_init init, std::size_t fan_in,
                  std::size_t fan_out, rng& gen) {
  const auto in = static_cast<double>(fan_in);
  const auto both = static_cast<double>(fan_in + fan_out);
  switch (init) {
    case weight_init::xavier:
      fill_normal(weights, std::sqrt(2.0 / both), gen);
      break;
    case weight_init::xavier_uniform:
      fill_uniform(weights, std::sqrt(6.0 / both), gen);
      break;
    case weight_init::he:
      fill_normal(weights, std::sqrt(2.0 / in), gen);
      break;
    case weight_init::he_uniform:
      fill_uniform(weights, std::sqrt(6.0 / in), gen);
      break;
  }
}

} // namespace strom::compute
