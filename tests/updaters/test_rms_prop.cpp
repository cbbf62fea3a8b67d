#define BOOST_TEST_MODULE updaters_rms_prop
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "strom/compute/updaters/rms_prop.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(state_holds_one_cache_value_per_parameter) {
  const rms_prop_updater rms_prop;
  BOOST_TEST(rms_prop.state_size(0) == 0u);
  BOOST_TEST(rms_prop.state_size(9) == 9u);
}

BOOST_AUTO_TEST_CASE(defaults_are_deeplearning4js) {
  const rms_prop_options options = rms_prop_updater{}.options();
  BOOST_TEST(options.decay == 0.95f);
  BOOST_TEST(options.epsilon == 1e-8f);
}

BOOST_AUTO_TEST_CASE(three_steps_match_rms_prop_by_hand) {
  const rms_prop_updater rms_prop({.decay = 0.95f, .epsilon = 1e-8f});
  std::vector<float> cache(2);
  rms_prop.initialize_state(cache);
  const step_context step{.iteration = 0, .epoch = 0, .learning_rate = 0.1f};

  // Step 1, g = {1, -2}: cache = 0.05 g² = {0.05, 0.2};
  // update = 0.1 g / sqrt(cache) = {0.1 / 0.2236068, -0.2 / 0.4472136} = {0.4472136, -0.4472136}.
  std::vector<float> g{1.0f, -2.0f};
  rms_prop.compute_update(g, cache, step);
  BOOST_CHECK_CLOSE(g[0], 0.4472136f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], -0.4472136f, tolerance_percent);

  // Step 2, g = {0.5, 1}: cache = 0.95 {0.05, 0.2} + 0.05 {0.25, 1} = {0.06, 0.24};
  // update = {0.05 / 0.2449490, 0.1 / 0.4898979} = {0.2041241, 0.2041241}.
  g = {0.5f, 1.0f};
  rms_prop.compute_update(g, cache, step);
  BOOST_CHECK_CLOSE(g[0], 0.2041241f, tolerance_percent);
  BOOST_CHECK_CLOSE(g[1], 0.2041241f, tolerance_percent);

  // Step 3, g = {0, -1}: cache = 0.95 {0.06, 0.24} + 0.05 {0, 1} = {0.057, 0.278};
  // update = {0, -0.1 / 0.5272571} = {0, -0.1896608}.
  g = {0.0f, -1.0f};
  rms_prop.compute_update(g, cache, step);
  BOOST_CHECK_SMALL(g[0], 1e-12f);
  BOOST_CHECK_CLOSE(g[1], -0.1896608f, tolerance_percent);
  BOOST_CHECK_CLOSE(cache[0], 0.057f, tolerance_percent);
  BOOST_CHECK_CLOSE(cache[1], 0.278f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(refuses_a_state_buffer_of_the_wrong_size) {
  const rms_prop_updater rms_prop;
  std::vector<float> state(4);
  std::vector<float> gradient(2);
  BOOST_CHECK_THROW(rms_prop.compute_update(gradient, state, {}), std::invalid_argument);
}
