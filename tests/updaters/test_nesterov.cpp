#define BOOST_TEST_MODULE updaters_nesterov
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/nesterov.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(state_holds_one_velocity_per_parameter) {
  const nesterov_updater nesterov;
  BOOST_TEST(nesterov.state_size(0) == 0u);
  BOOST_TEST(nesterov.state_size(7) == 7u);
}

BOOST_AUTO_TEST_CASE(three_steps_match_pytorch_nesterov_by_hand) {
  const nesterov_updater nesterov({.momentum = 0.9f});
  std::vector<float> velocity(2);
  nesterov.initialize_state(velocity);
  const step_context step{.iteration = 0, .epoch = 0, .learning_rate = 0.1f};

  // Step 1, g = {1, -2}: v = {1, -2};
  // update = 0.1 * (g + 0.9 v) = 0.1 * {1 + 0.9, -2 - 1.8} = {0.19, -0.38}.
  std::vector<float> g{1.0f, -2.0f};
  nesterov.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.19f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.38f, tolerance_percent);

  // Step 2, g = {1, -2}: v = 0.9 * {1, -2} + {1, -2} = {1.9, -3.8};
  // update = 0.1 * {1 + 1.71, -2 - 3.42} = {0.271, -0.542}.
  g = {1.0f, -2.0f};
  nesterov.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.271f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.542f, tolerance_percent);

  // Step 3, g = {0, 1}: v = 0.9 * {1.9, -3.8} + {0, 1} = {1.71, -2.42};
  // update = 0.1 * {0 + 1.539, 1 - 2.178} = {0.1539, -0.1178}.
  g = {0.0f, 1.0f};
  nesterov.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.1539f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.1178f, tolerance_percent);
  BOOST_CHECK_CLOSE(velocity[0], 1.71f, tolerance_percent);
  BOOST_CHECK_CLOSE(velocity[1], -2.42f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const nesterov_updater nesterov;
  std::vector<float> state(1);
  std::vector<float> gradient(2);
  BOOST_CHECK_THROW(nesterov.compute_update(gradient, state, {}), std::invalid_argument);
}
