#define BOOST_TEST_MODULE layers_activation
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/activation.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;
using strom::compute::testing::random_values;

namespace {

constexpr std::size_t batch = 3;
const shape sample{2, 3, 2};

/// Random inputs at least 0.1 away from zero, where relu and leaky relu have their kink.
std::vector<float> off_kink_values(std::size_t n) {
  rng gen(31);
  auto values = random_values(n, gen, 0.1f, 2.0f);
  for (std::size_t i = 0; i < n; i += 2)
    values[i] = -values[i];
  return values;
}

void check_activation_gradients(activation_kind function, float alpha) {
  check_gradients([&] { return std::make_unique<activation>(sample, function, alpha); },
                  off_kink_values(batch * sample.size()), {.batch = batch, .epsilon = 1e-3});
}

std::vector<float> apply(activation_kind function, float alpha, const std::vector<float>& in) {
  activation layer({in.size(), 1, 1}, function, alpha);
  std::vector<float> out(in.size());
  layer.forward(in, out, 1, pass::inference);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(kind_names_the_function) {
  BOOST_TEST(activation(sample, activation_kind::relu).kind() == "relu");
  BOOST_TEST(activation(sample, activation_kind::leaky_relu).kind() == "leaky_relu");
  BOOST_TEST(activation(sample, activation_kind::tanh).kind() == "tanh");
  BOOST_TEST(activation(sample, activation_kind::sigmoid).kind() == "sigmoid");
  BOOST_TEST((activation(sample, activation_kind::tanh).output_shape() == sample));
}

BOOST_AUTO_TEST_CASE(forward_values) {
  const std::vector<float> in{-2.0f, 0.0f, 3.0f};
  const auto relu = apply(activation_kind::relu, 0.0f, in);
  BOOST_TEST(relu == (std::vector<float>{0.0f, 0.0f, 3.0f}), boost::test_tools::per_element());
  const auto leaky = apply(activation_kind::leaky_relu, 0.1f, in);
  BOOST_TEST(leaky == (std::vector<float>{-0.2f, 0.0f, 3.0f}), boost::test_tools::per_element());
  const auto tanh = apply(activation_kind::tanh, 0.0f, in);
  BOOST_TEST(tanh[0] == std::tanh(-2.0f), boost::test_tools::tolerance(1e-6f));
  const auto sigmoid = apply(activation_kind::sigmoid, 0.0f, in);
  BOOST_TEST(sigmoid[1] == 0.5f);
  BOOST_TEST(sigmoid[2] == 1.0f / (1.0f + std::exp(-3.0f)), boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(relu_gradients_match) {
  check_activation_gradients(activation_kind::relu, 0.0f);
}

BOOST_AUTO_TEST_CASE(leaky_relu_gradients_match) {
  check_activation_gradients(activation_kind::leaky_relu, 0.2f);
}

BOOST_AUTO_TEST_CASE(tanh_gradients_match) {
  check_activation_gradients(activation_kind::tanh, 0.0f);
}

BOOST_AUTO_TEST_CASE(sigmoid_gradients_match) {
  check_activation_gradients(activation_kind::sigmoid, 0.0f);
}
