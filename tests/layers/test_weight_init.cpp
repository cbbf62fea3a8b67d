#define BOOST_TEST_MODULE layers_weight_init
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "strom/compute/layers/weight_init.hpp"

using namespace strom::compute;

namespace {

constexpr std::size_t draws = 200000;
constexpr std::size_t fan_in = 300;
constexpr std::size_t fan_out = 100;

struct moments {
  double mean = 0.0;
  double stddev = 0.0;
  float low = 0.0f;
  float high = 0.0f;
};

moments draw(weight_init init) {
  std::vector<float> weights(draws);
  rng gen(12);
  fill_weights(weights, init, fan_in, fan_out, gen);
  moments m{0.0, 0.0, weights[0], weights[0]};
  double squares = 0.0;
  for (float w : weights) {
    m.mean += w;
    squares += static_cast<double>(w) * w;
    m.low = std::min(m.low, w);
    m.high = std::max(m.high, w);
  }
  m.mean /= draws;
  m.stddev = std::sqrt(squares / draws - m.mean * m.mean);
  return m;
}

void check_normal(weight_init init, double stddev) {
  const auto m = draw(init);
  BOOST_TEST(std::abs(m.mean) < 0.01 * stddev);  // 4.5 standard errors
  BOOST_TEST(m.stddev == stddev, boost::test_tools::tolerance(0.01));
  BOOST_TEST(m.high > 3.0 * stddev);  // a bell, not a box
}

void check_uniform(weight_init init, double limit) {
  const auto m = draw(init);
  BOOST_TEST(std::abs(m.mean) < 0.01 * limit);
  BOOST_TEST(m.stddev == limit / std::sqrt(3.0), boost::test_tools::tolerance(0.01));
  BOOST_TEST(m.low >= -limit);
  BOOST_TEST(m.high < limit);
  BOOST_TEST(m.high > 0.99 * limit);
}

} // namespace

BOOST_AUTO_TEST_CASE(xavier_is_normal_with_glorot_stddev) {
  check_normal(weight_init::xavier, std::sqrt(2.0 / (fan_in + fan_out)));
}

BOOST_AUTO_TEST_CASE(xavier_uniform_has_glorot_limit) {
  check_uniform(weight_init::xavier_uniform, std::sqrt(6.0 / (fan_in + fan_out)));
}

BOOST_AUTO_TEST_CASE(he_is_normal_with_fan_in_stddev) {
  check_normal(weight_init::he, std::sqrt(2.0 / fan_in));
}

BOOST_AUTO_TEST_CASE(he_uniform_has_fan_in_limit) {
  check_uniform(weight_init::he_uniform, std::sqrt(6.0 / fan_in));
}

BOOST_AUTO_TEST_CASE(same_seed_gives_same_weights) {
  std::vector<float> a(50), b(50);
  rng first(99), second(99);
  fill_weights(a, weight_init::he, 10, 5, first);
  fill_weights(b, weight_init::he, 10, 5, second);
  BOOST_TEST(a == b, boost::test_tools::per_element());
}
