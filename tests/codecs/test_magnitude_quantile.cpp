#define BOOST_TEST_MODULE codecs_magnitude_quantile
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "strom/compute/encoders/magnitude_quantile.hpp"

using namespace strom::compute;

namespace {

/// Share of `values` whose magnitude is at least `threshold`.
double share_at_or_above(const std::vector<float>& values, float threshold) {
  std::size_t count = 0;
  for (float v : values)
    count += std::fabs(v) >= threshold;
  return static_cast<double>(count) / static_cast<double>(values.size());
}

} // namespace

BOOST_AUTO_TEST_CASE(a_small_tensor_gives_its_exact_quantile) {
  // 1..1000 with alternating signs: the top 1% of magnitudes are 991..1000.
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = (i % 2 ? -1.0f : 1.0f) * static_cast<float>(i + 1);
  std::vector<float> workspace;
  BOOST_TEST(magnitude_quantile(values, 0.01, 0, workspace) == 991.0f);
  BOOST_TEST(magnitude_quantile(values, 0.5, 0, workspace) == 501.0f);
  BOOST_TEST(magnitude_quantile(values, 1.0, 0, workspace) == 1.0f);
}

BOOST_AUTO_TEST_CASE(a_sampled_normal_tensor_keeps_about_the_wanted_share) {
  // |N(0, 1)| has its 99th percentile at 2.576; a sample of 2048 finds it within a few percent.
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(400000);
  for (auto& v : values)
    v = normal(generator);
  std::vector<float> workspace;
  for (std::size_t start = 0; start < 5; ++start) {
    const float threshold = magnitude_quantile(values, 0.01, start, workspace);
    BOOST_TEST(threshold > 2.4f);
    BOOST_TEST(threshold < 2.8f);
    const double share = share_at_or_above(values, threshold);
    BOOST_TEST(share > 0.006);
    BOOST_TEST(share < 0.015);
  }
}

BOOST_AUTO_TEST_CASE(scales_with_the_tensor_whatever_its_magnitude) {
  // One estimator for a layer of tiny updates and one of large ones: the ratio carries over.
  std::mt19937 generator(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> tiny(50000), large(50000);
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    tiny[i] = 1e-7f * uniform(generator);
    large[i] = tiny[i] * 1e9f;
  }
  std::vector<float> workspace;
  const float tiny_threshold = magnitude_quantile(tiny, 0.02, 1, workspace);
  const float large_threshold = magnitude_quantile(large, 0.02, 1, workspace);
  BOOST_TEST(tiny_threshold > 0.9e-7f);
  BOOST_TEST(large_threshold / tiny_threshold == 1e9f, boost::test_tools::tolerance(1e-4f));
}

BOOST_AUTO_TEST_CASE(a_tensor_of_constants_gives_the_constant) {
  const std::vector<float> values(100000, -0.25f);
  std::vector<float> workspace;
  BOOST_TEST(magnitude_quantile(values, 0.01, 9, workspace) == 0.25f);
}

BOOST_AUTO_TEST_CASE(a_tensor_of_zeros_and_an_empty_one_give_zero) {
  const std::vector<float> zeros(70000, 0.0f);
  std::vector<float> workspace;
  BOOST_TEST(magnitude_quantile(zeros, 0.01, 0, workspace) == 0.0f);
  BOOST_TEST(magnitude_quantile(std::vector<float>{}, 0.01, 0, workspace) == 0.0f);
}

BOOST_AUTO_TEST_CASE(extreme_values_give_a_finite_result) {
  std::vector<float> values(3000, 1.0f);
  for (std::size_t i = 0; i < values.size(); i += 3)
    values[i] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 1; i < values.size(); i += 3)
    values[i] = -std::numeric_limits<float>::infinity();
  std::vector<float> workspace;
  const float top = magnitude_quantile(values, 0.01, 0, workspace);
  BOOST_TEST(std::isfinite(top));
  BOOST_TEST(top == std::numeric_limits<float>::max());
  // NaN counts as 0: a third of the elements are 0, a third 1, a third the largest float.
  BOOST_TEST(magnitude_quantile(values, 0.9, 0, workspace) == 0.0f);
  BOOST_TEST(magnitude_quantile(values, 0.5, 0, workspace) == 1.0f);
}
