#define BOOST_TEST_MODULE updaters_sgd
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/sgd.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(has_no_state) {
  const sgd_updater sgd;
  BOOST_TEST(sgd.state_size(0) == 0u);
  BOOST_TEST(sgd.state_size(1000) == 0u);
}

BOOST_AUTO_TEST_CASE(consecutive_steps_scale_each_gradient_by_its_rate) {
  const sgd_updater sgd;
  std::vector<float> state;

  // Step 1, lr 0.1: update = 0.1 * {1, -2, 0.5} = {0.1, -0.2, 0.05}.
  std::vector<float> first{1.0f, -2.0f, 0.5f};
  sgd.compute_update(first, state, {.iteration = 0, .epoch = 0, .learning_rate = 0.1f});
  BOOST_CHECK_CLOSE(first[0], 0.1f, tolerance_percent);
  BOOST_CHECK_CLOSE(first[1], -0.2f, tolerance_percent);
  BOOST_CHECK_CLOSE(first[2], 0.05f, tolerance_percent);

  // Step 2, lr 0.5: update = 0.5 * {2, 4, -1} = {1, 2, -0.5}; nothing carried over.
  std::vector<float> second{2.0f, 4.0f, -1.0f};
  sgd.compute_update(second, state, {.iteration = 1, .epoch = 0, .learning_rate = 0.5f});
  BOOST_CHECK_CLOSE(second[0], 1.0f, tolerance_percent);
  BOOST_CHECK_CLOSE(second[1], 2.0f, tolerance_percent);
  BOOST_CHECK_CLOSE(second[2], -0.5f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(applying_the_update_subtracts_it_from_the_parameters) {
  const sgd_updater sgd;
  std::vector<float> state;
  std::vector<float> parameters{1.0f, 1.0f};
  std::vector<float> gradient{1.0f, -2.0f};
  sgd.compute_update(gradient, state, {.iteration = 0, .epoch = 0, .learning_rate = 0.1f});
  apply_update(parameters, gradient);
  // 1 - 0.1 * 1 = 0.9; 1 - 0.1 * (-2) = 1.2.
  BOOST_CHECK_CLOSE(parameters[0], 0.9f, tolerance_percent);
  BOOST_CHECK_CLOSE(parameters[1], 1.2f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const sgd_updater sgd;
  std::vector<float> state(1);
  std::vector<float> gradient{1.0f};
  BOOST_CHECK_THROW(sgd.compute_update(gradient, state, {}), std::invalid_argument);
}
