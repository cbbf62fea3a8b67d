#define BOOST_TEST_MODULE layers_softmax_cross_entropy
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/softmax_cross_entropy.hpp"

using namespace strom::compute;
using strom::compute::testing::random_values;

BOOST_AUTO_TEST_CASE(loss_matches_hand_computed_value) {
  // Sample 0: logits {0, ln 3}, label 1: softmax {1/4, 3/4}, loss -ln(3/4).
  // Sample 1: logits {2, 2}, label 0: loss ln 2.
  const std::vector<float> logits{0.0f, std::log(3.0f), 2.0f, 2.0f};
  const std::vector<std::int32_t> labels{1, 0};
  std::vector<float> gradient(4);
  const float loss = softmax_cross_entropy(logits, labels, 2, 2, gradient);
  BOOST_TEST(loss == (-std::log(0.75f) + std::log(2.0f)) / 2.0f,
             boost::test_tools::tolerance(1e-6f));
  const std::vector<float> expected{0.125f, -0.125f, -0.25f, 0.25f};
  for (std::size_t i = 0; i < 4; ++i)
    BOOST_TEST(gradient[i] == expected[i], boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(large_logits_stay_finite) {
  const std::vector<float> logits{1000.0f, 0.0f, -1000.0f};
  const std::vector<std::int32_t> labels{0};
  std::vector<float> gradient(3);
  const float loss = softmax_cross_entropy(logits, labels, 1, 3, gradient);
  BOOST_TEST(std::isfinite(loss));
  BOOST_TEST(loss == 0.0f, boost::test_tools::tolerance(1e-6f));
  for (float g : gradient)
    BOOST_TEST(std::isfinite(g));
}

BOOST_AUTO_TEST_CASE(empty_gradient_means_loss_only) {
  rng gen(8);
  const auto logits = random_values(12, gen, -3.0f, 3.0f);
  const std::vector<std::int32_t> labels{0, 3, 2};
  std::vector<float> gradient(12);
  const float with = softmax_cross_entropy(logits, labels, 3, 4, gradient);
  const float without = softmax_cross_entropy(logits, labels, 3, 4, {});
  BOOST_TEST(with == without);
}

BOOST_AUTO_TEST_CASE(gradient_matches_central_differences) {
  const std::size_t batch = 4, classes = 5;
  rng gen(9);
  auto logits = random_values(batch * classes, gen, -2.0f, 2.0f);
  const std::vector<std::int32_t> labels{4, 0, 2, 2};
  std::vector<float> gradient(batch * classes);
  softmax_cross_entropy(logits, labels, batch, classes, gradient);
  const float eps = 1e-2f;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float saved = logits[i];
    logits[i] = saved + eps;
    const double plus = softmax_cross_entropy(logits, labels, batch, classes, {});
    logits[i] = saved - eps;
    const double minus = softmax_cross_entropy(logits, labels, batch, classes, {});
    logits[i] = saved;
    const double numeric = (plus - minus) / (2.0 * eps);
    BOOST_TEST(std::abs(numeric - gradient[i]) <= 1e-2 * std::max(0.01, std::abs(numeric)));
  }
}

BOOST_AUTO_TEST_CASE(label_outside_classes_is_rejected) {
  const std::vector<float> logits{0.0f, 1.0f};
  const std::vector<std::int32_t> labels{2};
  BOOST_CHECK_THROW(softmax_cross_entropy(logits, labels, 1, 2, {}), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(count_correct_compares_argmax_with_label) {
  const std::vector<float> logits{0.1f, 0.9f, 0.0f,   // argmax 1
                                  2.0f, 1.0f, 0.5f,   // argmax 0
                                  0.0f, 0.0f, 3.0f};  // argmax 2
  const std::vector<std::int32_t> labels{1, 2, 2};
  BOOST_TEST(count_correct(logits, labels, 3, 3) == 2u);
}
