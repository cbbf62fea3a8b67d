#define BOOST_TEST_MODULE layers_dense
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/dense.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;
using strom::compute::testing::random_values;

namespace {

/// out[b][u] = b[u] + sum_i in[b][i] * W[u][i], written out directly.
std::vector<float> naive_dense(const std::vector<float>& in, const std::vector<float>& params,
                               std::size_t batch, std::size_t inputs, std::size_t units) {
  std::vector<float> out(batch * units);
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t u = 0; u < units; ++u) {
      double total = params[units * inputs + u];
      for (std::size_t i = 0; i < inputs; ++i)
        total += static_cast<double>(in[b * inputs + i]) * params[u * inputs + i];
      out[b * units + u] = static_cast<float>(total);
    }
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(layout_is_weights_then_biases_and_only_weights_are_regularized) {
  dense layer({2, 3, 1}, 4, weight_init::xavier);
  BOOST_TEST(layer.kind() == "dense");
  BOOST_TEST(layer.parameter_count() == 4u * 6u + 4u);
  BOOST_TEST(layer.state_count() == 0u);
  BOOST_TEST((layer.output_shape() == shape{4, 1, 1}));
  BOOST_TEST(layer.regularized_range().begin == 0u);
  BOOST_TEST(layer.regularized_range().end == 24u);
}

BOOST_AUTO_TEST_CASE(initialize_draws_weights_and_zeroes_biases) {
  dense layer({5, 1, 1}, 3, weight_init::he);
  std::vector<float> params(layer.parameter_count(), 42.0f);
  rng gen(1);
  layer.initialize(params, {}, gen);
  for (std::size_t i = 0; i < 15; ++i)
    BOOST_TEST(params[i] != 42.0f);
  for (std::size_t i = 15; i < 18; ++i)
    BOOST_TEST(params[i] == 0.0f);
}

BOOST_AUTO_TEST_CASE(forward_matches_naive_reference) {
  const std::size_t batch = 5, inputs = 7, units = 3;
  dense layer({inputs, 1, 1}, units, weight_init::xavier);
  rng gen(11);
  auto params = random_values(layer.parameter_count(), gen);
  std::vector<float> grads(params.size());
  layer.bind(params, grads, {});
  layer.reserve(batch);
  const auto in = random_values(batch * inputs, gen);
  std::vector<float> out(batch * units);
  layer.forward(in, out, batch, pass::inference);
  const auto expected = naive_dense(in, params, batch, inputs, units);
  for (std::size_t i = 0; i < out.size(); ++i)
    BOOST_TEST(std::abs(out[i] - expected[i]) <= 1e-5f * (1.0f + std::abs(expected[i])));
}

BOOST_AUTO_TEST_CASE(gradients_match_central_differences) {
  rng gen(3);
  const shape input{3, 2, 2};
  check_gradients([&] { return std::make_unique<dense>(input, 5, weight_init::xavier); },
                  random_values(3 * input.size(), gen), {.batch = 3});
}

BOOST_AUTO_TEST_CASE(backward_without_input_gradient_still_overwrites_parameter_gradients) {
  const std::size_t batch = 2;
  dense layer({3, 1, 1}, 2, weight_init::xavier);
  rng gen(5);
  auto params = random_values(layer.parameter_count(), gen);
  std::vector<float> grads(params.size());
  layer.bind(params, grads, {});
  layer.reserve(batch);
  const auto in = random_values(batch * 3, gen);
  const auto dout = random_values(batch * 2, gen);
  std::vector<float> out(batch * 2);
  layer.forward(in, out, batch, pass::training);
  layer.backward(in, out, dout, {}, batch);
  const auto first = grads;
  layer.backward(in, out, dout, {}, batch);
  for (std::size_t i = 0; i < grads.size(); ++i)
    BOOST_TEST(grads[i] == first[i]);
  // db is the column sum of dout.
  BOOST_TEST(grads[6] == dout[0] + dout[2], boost::test_tools::tolerance(1e-6f));
}
