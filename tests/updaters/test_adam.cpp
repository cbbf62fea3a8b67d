#define BOOST_TEST_MODULE updaters_adam
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/adam.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(state_holds_two_moments_per_parameter) {
  const adam_updater adam;
  BOOST_TEST(adam.state_size(0) == 0u);
  BOOST_TEST(adam.state_size(5) == 10u);
}

BOOST_AUTO_TEST_CASE(defaults_are_the_papers) {
  const adam_options options = adam_updater{}.options();
  BOOST_TEST(options.beta1 == 0.9f);
  BOOST_TEST(options.beta2 == 0.999f);
  BOOST_TEST(options.epsilon == 1e-8f);
}

BOOST_AUTO_TEST_CASE(three_steps_match_bias_corrected_adam_by_hand) {
  const adam_updater adam({.beta1 = 0.9f, .beta2 = 0.999f, .epsilon = 1e-8f});
  std::vector<float> state(4);
  adam.initialize_state(state);

  // Step 1 (t = 1), g = {1, -2}:
  //   m = 0.1 g = {0.1, -0.2};  v = 0.001 g² = {0.001, 0.004}
  //   m^ = m / (1 - 0.9) = {1, -2};  v^ = v / (1 - 0.999) = {1, 4}
  //   update = 0.1 * m^ / (sqrt(v^) + 1e-8) = {0.1 / 1, -0.2 / 2} = {0.1, -0.1}
  //   (without bias correction it would be 0.1 * 0.1 / sqrt(0.001) = 0.316)
  std::vector<float> g{1.0f, -2.0f};
  adam.compute_update(g, state, {.iteration = 0, .epoch = 0, .learning_rate = 0.1f});
  BOOST_CHECK_CLOSE(g[0], 0.1f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.1f, tolerance_percent);

  // Step 2 (t = 2), g = {0.5, 1}:
  //   m = 0.9 {0.1, -0.2} + 0.1 {0.5, 1} = {0.14, -0.08}
  //   v = 0.999 {0.001, 0.004} + 0.001 {0.25, 1} = {0.001249, 0.004996}
  //   1 - 0.9² = 0.19;  1 - 0.999² = 0.001999
  //   m^ = {0.14 / 0.19, -0.08 / 0.19} = {0.7368421, -0.4210526}
  //   v^ = {0.001249 / 0.001999, 0.004996 / 0.001999} = {0.6248124, 2.4992496}
  //   sqrt(v^) = {0.7904508, 1.5809015}
  //   update = 0.1 * {0.7368421 / 0.7904508, -0.4210526 / 1.5809015} = {0.0932180, -0.0266337}
  g = {0.5f, 1.0f};
  adam.compute_update(g, state, {.iteration = 1, .epoch = 0, .learning_rate = 0.1f});
  BOOST_CHECK_CLOSE(g[0], 0.0932180f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.0266337f, tolerance_percent);

  // Step 3 (t = 3), g = {0, -1}:
  //   m = 0.9 {0.14, -0.08} + 0.1 {0, -1} = {0.126, -0.172}
  //   v = 0.999 {0.001249, 0.004996} + 0.001 {0, 1} = {0.001247751, 0.005991004}
  //   1 - 0.9³ = 0.271;  1 - 0.999³ = 0.002997001
  //   m^ = {0.4649446, -0.6346863};  v^ = {0.4163332, 1.9989997}
  //   sqrt(v^) = {0.6452389, 1.4138598}
  //   update = 0.1 * {0.4649446 / 0.6452389, -0.6346863 / 1.4138598} = {0.0720578, -0.0448903}
  g = {0.0f, -1.0f};
  adam.compute_update(g, state, {.iteration = 2, .epoch = 0, .learning_rate = 0.1f});
  BOOST_CHECK_CLOSE(g[0], 0.0720578f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.0448903f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(state_holds_first_moments_then_second_moments) {
  const adam_updater adam;
  std::vector<float> state(4);
  adam.initialize_state(state);
  std::vector<float> g{1.0f, -2.0f};
  adam.compute_update(g, state, {.iteration = 0, .epoch = 0, .learning_rate = 0.1f});
  // m = 0.1 g = {0.1, -0.2}, then v = (1 - beta2) g². 0.999 is not a float: 0.999f is
  // 0.99900001287, so 1 - beta2 = 0.00099998713 and v = {0.00099998713, 0.0039999485}.
  BOOST_CHECK_CLOSE(state[0], 0.1f, tolerance_percent);
  BOOST_CHECK_CLOSE(state[1], -0.2f, tolerance_percent);
  BOOST_CHECK_CLOSE(state[2], 0.00099998713f, tolerance_percent);
  BOOST_CHECK_CLOSE(state[3], 0.0039999485f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(bias_correction_counts_steps_from_the_iteration) {
  const adam_updater adam;
  std::vector<float> state(2);
  adam.initialize_state(state);
  // Fresh state, but iteration 9 means t = 10, g = {2}:
  //   m = 0.1 * 2 = 0.2;  v = 0.001 * 4 = 0.004
  //   1 - 0.9^10 = 0.6513216;  1 - 0.999^10 = 0.0099551
  //   m^ = 0.2 / 0.6513216 = 0.3070680;  v^ = 0.004 / 0.0099551 = 0.4018033
  //   update = 0.1 * 0.3070680 / sqrt(0.4018033) = 0.1 * 0.3070680 / 0.6338796 = 0.0484426
  std::vector<float> g{2.0f};
  adam.compute_update(g, state, {.iteration = 9, .epoch = 0, .learning_rate = 0.1f});
  BOOST_CHECK_CLOSE(g[0], 0.0484426f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const adam_updater adam;
  std::vector<float> state(2);  // one moment's worth for two parameters
  std::vector<float> gradient(2);
  BOOST_CHECK_THROW(adam.compute_update(gradient, state, {}), std::invalid_argument);
}
