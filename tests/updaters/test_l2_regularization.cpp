#define BOOST_TEST_MODULE updaters_l2_regularization
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/l2_regularization.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(adds_coefficient_times_weight_inside_the_ranges_only) {
  const std::vector<float> parameters{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, -6.0f};
  std::vector<float> gradients{0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f};
  const std::vector<float_range> ranges{{0, 2}, {4, 6}};
  add_l2(parameters, gradients, ranges, 0.5f);
  BOOST_CHECK_CLOSE(gradients[0], 0.6f, tolerance_percent);   // 0.1 + 0.5 * 1
  BOOST_CHECK_CLOSE(gradients[1], 1.1f, tolerance_percent);   // 0.1 + 0.5 * 2
  BOOST_TEST(gradients[2] == 0.1f);                           // outside: a bias
  BOOST_TEST(gradients[3] == 0.1f);                           // outside: a bias
  BOOST_CHECK_CLOSE(gradients[4], 2.6f, tolerance_percent);   // 0.1 + 0.5 * 5
  BOOST_CHECK_CLOSE(gradients[5], -2.9f, tolerance_percent);  // 0.1 + 0.5 * (-6)
}

BOOST_AUTO_TEST_CASE(empty_ranges_change_nothing) {
  const std::vector<float> parameters{1.0f, 2.0f};
  std::vector<float> gradients{0.1f, 0.2f};
  const std::vector<float_range> ranges{{1, 1}};
  add_l2(parameters, gradients, ranges, 0.5f);
  add_l2(parameters, gradients, {}, 0.5f);
  BOOST_TEST(gradients[0] == 0.1f);
  BOOST_TEST(gradients[1] == 0.2f);
}

BOOST_AUTO_TEST_CASE(zero_coefficient_changes_nothing) {
  const std::vector<float> parameters{1.0f, 2.0f};
  std::vector<float> gradients{0.1f, 0.2f};
  const std::vector<float_range> ranges{{0, 2}};
  add_l2(parameters, gradients, ranges, 0.0f);
  BOOST_TEST(gradients[0] == 0.1f);
  BOOST_TEST(gradients[1] == 0.2f);
}

BOOST_AUTO_TEST_CASE(refuses_a_range_past_the_buffers_without_touching_them) {
  const std::vector<float> parameters{1.0f, 2.0f};
  std::vector<float> gradients{0.1f, 0.2f};
  const std::vector<float_range> ranges{{0, 1}, {1, 3}};
  BOOST_CHECK_THROW(add_l2(parameters, gradients, ranges, 0.5f), std::invalid_argument);
  BOOST_TEST(gradients[0] == 0.1f);
}

BOOST_AUTO_TEST_CASE(refuses_a_reversed_range) {
  const std::vector<float> parameters{1.0f, 2.0f};
  std::vector<float> gradients{0.1f, 0.2f};
  const std::vector<float_range> ranges{{2, 1}};
  BOOST_CHECK_THROW(add_l2(parameters, gradients, ranges, 0.5f), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(refuses_buffers_of_different_sizes) {
  const std::vector<float> parameters{1.0f, 2.0f};
  std::vector<float> gradients{0.1f};
  BOOST_CHECK_THROW(add_l2(parameters, gradients, {}, 0.5f), std::invalid_argument);
}
