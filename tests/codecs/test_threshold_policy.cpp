#define BOOST_TEST_MODULE codecs_threshold_policy
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <stdexcept>

#include "strom/compute/encoders/threshold_policy.hpp"

using namespace strom::compute;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(defaults_are_dl4j_s) {
  BOOST_TEST(fixed_threshold_options{}.threshold == 1e-3f);
  const adaptive_threshold_options adaptive;
  BOOST_TEST(adaptive.initial_threshold == 1e-4f);
  BOOST_TEST(adaptive.min_sparsity == 1e-4);
  BOOST_TEST(adaptive.max_sparsity == 1e-2);
  BOOST_TEST(std::pow(adaptive.decay_rate, 20.0) == 0.5, tt::tolerance(1e-12));
  const target_sparsity_options target;
  BOOST_TEST(target.initial_threshold == 1e-4f);
  BOOST_TEST(target.sparsity_target == 1e-3);
}

BOOST_AUTO_TEST_CASE(fixed_policy_never_moves) {
  threshold_policy policy(fixed_threshold_options{0.25f});
  for (double sparsity : {0.0, 1e-3, 0.5, 1.0}) {
    policy.observe(sparsity);
    BOOST_TEST(policy.threshold() == 0.25f);
  }
}

BOOST_AUTO_TEST_CASE(adaptive_policy_shrinks_below_band_grows_above_and_rests_inside) {
  adaptive_threshold_options options;
  threshold_policy policy(options);
  const double decay = options.decay_rate;
  BOOST_TEST(policy.threshold() == 1e-4f);
  policy.observe(0.5e-4);  // below the band: more values wanted, lower threshold
  BOOST_TEST(policy.threshold() == static_cast<float>(1e-4f * decay));
  policy.observe(1e-3);    // inside the band: unchanged
  BOOST_TEST(policy.threshold() == static_cast<float>(1e-4f * decay));
  policy.observe(1e-4);    // the band's edges are inside
  policy.observe(1e-2);
  BOOST_TEST(policy.threshold() == static_cast<float>(1e-4f * decay));
  policy.observe(0.05);    // above the band: fewer values wanted, higher threshold
  BOOST_TEST(policy.threshold() == 1e-4f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(adaptive_policy_halves_in_twenty_empty_iterations) {
  threshold_policy policy(adaptive_threshold_options{});
  for (int k = 0; k < 20; ++k) policy.observe(0.0);
  BOOST_TEST(policy.threshold() == 0.5e-4f, tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(target_sparsity_policy_always_steers_towards_target) {
  target_sparsity_options options;
  threshold_policy policy(options);
  policy.observe(2e-3);  // above target: raise
  const float raised = policy.threshold();
  BOOST_TEST(raised == static_cast<float>(1e-4f / options.decay_rate));
  policy.observe(1e-3);  // exactly on target: keep
  BOOST_TEST(policy.threshold() == raised);
  policy.observe(5e-4);  // below target, even inside the adaptive band: lower
  BOOST_TEST(policy.threshold() == static_cast<float>(raised * options.decay_rate));
}

BOOST_AUTO_TEST_CASE(threshold_stays_positive_and_finite_forever) {
  threshold_policy shrinking(target_sparsity_options{});
  threshold_policy growing(adaptive_threshold_options{});
  for (int k = 0; k < 10000; ++k) {
    shrinking.observe(0.0);
    growing.observe(1.0);
  }
  BOOST_TEST(shrinking.threshold() > 0.0f);
  BOOST_TEST(std::isfinite(growing.threshold()));
}

BOOST_AUTO_TEST_CASE(bad_options_throw) {
  BOOST_CHECK_THROW(threshold_policy(fixed_threshold_options{0.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(threshold_policy(fixed_threshold_options{NAN}), std::invalid_argument);
  adaptive_threshold_options band;
  band.min_sparsity = 0.1;
  band.max_sparsity = 0.01;
  BOOST_CHECK_THROW(threshold_policy{band}, std::invalid_argument);
  target_sparsity_options decay;
  decay.decay_rate = 1.0;
  BOOST_CHECK_THROW(threshold_policy{decay}, std::invalid_argument);
}
