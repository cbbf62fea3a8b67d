#define BOOST_TEST_MODULE updaters_ada_grad
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/ada_grad.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(state_holds_one_sum_of_squares_per_parameter) {
  const ada_grad_updater ada_grad;
  BOOST_TEST(ada_grad.state_size(0) == 0u);
  BOOST_TEST(ada_grad.state_size(4) == 4u);
}

BOOST_AUTO_TEST_CASE(default_epsilon_is_deeplearning4js) {
  BOOST_TEST(ada_grad_updater{}.options().epsilon == 1e-6f);
}

BOOST_AUTO_TEST_CASE(three_steps_match_ada_grad_by_hand) {
  const ada_grad_updater ada_grad({.epsilon = 1e-6f});
  std::vector<float> history(2);
  ada_grad.initialize_state(history);
  const step_context step{.iteration = 0, .epoch = 0, .learning_rate = 0.1f};

  // Step 1, g = {1, -2}: h = {1, 4};
  // update = 0.1 g / (sqrt(h) + 1e-6) = {0.1 / 1.000001, -0.2 / 2.000001}
  //        = {0.0999999, -0.09999995}.
  std::vector<float> g{1.0f, -2.0f};
  ada_grad.compute_update(g, history, step);
  BOOST_CHECK_CLOSE(g[0], 0.0999999f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.09999995f, tolerance_percent);

  // Step 2, g = {0.5, 1}: h = {1.25, 5};
  // update = {0.05 / 1.1180340, 0.1 / 2.2360680} = {0.0447213, 0.0447213}.
  g = {0.5f, 1.0f};
  ada_grad.compute_update(g, history, step);
  BOOST_CHECK_CLOSE(g[0], 0.0447213f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], 0.0447213f, tolerance_percent);

  // Step 3, g = {3, 0}: h = {10.25, 5}; update = {0.3 / 3.2015621, 0} = {0.0937042, 0}.
  g = {3.0f, 0.0f};
  ada_grad.compute_update(g, history, step);
  BOOST_CHECK_CLOSE(g[0], 0.0937042f, tolerance_percent);
  BOOST_CHECK_SMALL(g[1], 1e-12f);
  BOOST_CHECK_CLOSE(history[0], 10.25f, tolerance_percent);
  BOOST_CHECK_CLOSE(history[1], 5.0f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const ada_grad_updater ada_grad;
  std::vector<float> state;
  std::vector<float> gradient(2);
  BOOST_CHECK_THROW(ada_grad.compute_update(gradient, state, {}), std::invalid_argument);
}
