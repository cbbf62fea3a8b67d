#define BOOST_TEST_MODULE data_preprocessing
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <stdexcept>

#include "strom/compute/data/preprocessing.hpp"

using namespace strom::compute;
namespace tt = boost::test_tools;

namespace {

/// Three samples of two features: feature 0 is 1, 2, 3; feature 1 is constant 5.
dataset two_features() {
  dataset data;
  data.sample_shape = {1, 1, 2};
  data.classes = 1;
  data.features = {1, 5, 2, 5, 3, 5};
  data.labels = {0, 0, 0};
  return data;
}

} // namespace

BOOST_AUTO_TEST_CASE(scale_multiplies_every_feature) {
  auto data = two_features();
  scale(data, 0.5f);
  BOOST_TEST(data.features == (std::vector<float>{0.5f, 2.5f, 1, 2.5f, 1.5f, 2.5f}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(global_fit_uses_all_features) {
  const auto stats = fit_standardization(two_features(), standardize_kind::global);
  BOOST_REQUIRE(stats.mean.size() == 1u);
  BOOST_REQUIRE(stats.stddev.size() == 1u);
  // values 1 2 3 5 5 5: mean 21/6 = 3.5, population variance (6.25+2.25+0.25+3*2.25)/6.
  BOOST_TEST(stats.mean[0] == 3.5f, tt::tolerance(1e-6f));
  BOOST_TEST(stats.stddev[0] == std::sqrt(15.5f / 6.0f), tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(per_feature_fit_gives_one_statistic_per_feature) {
  const auto stats = fit_standardization(two_features(), standardize_kind::per_feature);
  BOOST_REQUIRE(stats.mean.size() == 2u);
  BOOST_TEST(stats.mean[0] == 2.0f, tt::tolerance(1e-6f));
  BOOST_TEST(stats.mean[1] == 5.0f, tt::tolerance(1e-6f));
  BOOST_TEST(stats.stddev[0] == std::sqrt(2.0f / 3.0f), tt::tolerance(1e-6f));
  BOOST_TEST(stats.stddev[1] == 0.0f);
}

BOOST_AUTO_TEST_CASE(none_fit_is_empty_and_apply_leaves_data_unchanged) {
  auto data = two_features();
  const auto stats = fit_standardization(data, standardize_kind::none);
  BOOST_TEST(stats.mean.empty());
  apply(data, stats);
  BOOST_TEST(data.features == two_features().features, tt::per_element());
}

BOOST_AUTO_TEST_CASE(global_apply_gives_zero_mean_unit_deviation) {
  auto data = two_features();
  apply(data, fit_standardization(data, standardize_kind::global));
  const auto after = fit_standardization(data, standardize_kind::global);
  BOOST_TEST(after.mean[0] == 0.0f, tt::tolerance(1e-5f));
  BOOST_TEST(after.stddev[0] == 1.0f, tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(per_feature_apply_treats_zero_deviation_as_one) {
  auto data = two_features();
  apply(data, fit_standardization(data, standardize_kind::per_feature));
  const float s = std::sqrt(2.0f / 3.0f);
  const std::vector<float> expected{-1 / s, 0, 0, 0, 1 / s, 0};
  for (std::size_t i = 0; i < expected.size(); ++i)
    BOOST_TEST(data.features[i] == expected[i], tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(training_statistics_are_applied_to_test_data) {
  const auto train = two_features();
  const auto stats = fit_standardization(train, standardize_kind::per_feature);
  dataset test;
  test.sample_shape = {1, 1, 2};
  test.features = {2, 7};
  test.labels = {0};
  apply(test, stats);
  BOOST_TEST(test.features[0] == 0.0f, tt::tolerance(1e-6f));
  BOOST_TEST(test.features[1] == 2.0f, tt::tolerance(1e-6f));  // (7 - 5) / 1
}

BOOST_AUTO_TEST_CASE(empty_dataset_fits_mean_zero_deviation_one) {
  dataset empty;
  empty.sample_shape = {1, 1, 3};
  const auto global = fit_standardization(empty, standardize_kind::global);
  BOOST_TEST(global.mean == (std::vector<float>{0}), tt::per_element());
  BOOST_TEST(global.stddev == (std::vector<float>{1}), tt::per_element());
  const auto per_feature = fit_standardization(empty, standardize_kind::per_feature);
  BOOST_TEST(per_feature.mean == (std::vector<float>{0, 0, 0}), tt::per_element());
  BOOST_TEST(per_feature.stddev == (std::vector<float>{1, 1, 1}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(fit_is_accurate_for_large_offsets) {
  // A one-pass E[x^2] - E[x]^2 in float would lose the deviation of 1 under an offset of 1e4.
  dataset data;
  data.sample_shape = {1, 1, 1};
  for (int i = 0; i < 1000; ++i) {
    data.features.push_back(10000.0f + (i % 2 == 0 ? 1.0f : -1.0f));
    data.labels.push_back(0);
  }
  const auto stats = fit_standardization(data, standardize_kind::global);
  BOOST_TEST(stats.mean[0] == 10000.0f, tt::tolerance(1e-7f));
  BOOST_TEST(stats.stddev[0] == 1.0f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(mismatched_statistics_throw) {
  auto data = two_features();
  standardization stats{{0, 0, 0}, {1, 1, 1}};
  BOOST_CHECK_THROW(apply(data, stats), std::invalid_argument);
}
