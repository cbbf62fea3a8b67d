#define BOOST_TEST_MODULE updaters_momentum
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/momentum.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(state_holds_one_velocity_per_parameter) {
  const momentum_updater momentum;
  BOOST_TEST(momentum.state_size(0) == 0u);
  BOOST_TEST(momentum.state_size(7) == 7u);
}

BOOST_AUTO_TEST_CASE(default_momentum_is_0_9) {
  BOOST_TEST(momentum_updater{}.options().momentum == 0.9f);
}

BOOST_AUTO_TEST_CASE(three_steps_match_heavy_ball_by_hand) {
  const momentum_updater momentum({.momentum = 0.9f});
  std::vector<float> velocity(2);
  momentum.initialize_state(velocity);
  const step_context step{.iteration = 0, .epoch = 0, .learning_rate = 0.1f};

  // Step 1, g = {1, -2}: v = {1, -2}; update = 0.1 * v = {0.1, -0.2}.
  std::vector<float> g{1.0f, -2.0f};
  momentum.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.1f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.2f, tolerance_percent);

  // Step 2, g = {1, -2}: v = 0.9 * {1, -2} + {1, -2} = {1.9, -3.8}; update = {0.19, -0.38}.
  g = {1.0f, -2.0f};
  momentum.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.19f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.38f, tolerance_percent);

  // Step 3, g = {0, 1}: v = 0.9 * {1.9, -3.8} + {0, 1} = {1.71, -2.42}; update = {0.171, -0.242}.
  g = {0.0f, 1.0f};
  momentum.compute_update(g, velocity, step);
  BOOST_CHECK_CLOSE(g[0], 0.171f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.242f, tolerance_percent);
  BOOST_CHECK_CLOSE(velocity[0], 1.71f, tolerance_percent);
  BOOST_CHECK_CLOSE(velocity[1], -2.42f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const momentum_updater momentum;
  std::vector<float> state(3);
  std::vector<float> gradient(2);
  BOOST_CHECK_THROW(momentum.compute_update(gradient, state, {}), std::invalid_argument);
}
