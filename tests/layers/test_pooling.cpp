#define BOOST_TEST_MODULE layers_pooling
#include <boost/test/unit_test.hpp>

#include <memory>
#include <stdexcept>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/pooling.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;

namespace {

/// Distinct inputs 0.1 apart in shuffled order: no ties, and a perturbation of +-eps never
/// changes a window's winner.
std::vector<float> tie_free_values(std::size_t n, std::uint64_t seed) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i)
    values[i] = 0.1f * static_cast<float>(i) - 0.05f * static_cast<float>(n);
  rng gen(seed);
  for (std::size_t i = n; i > 1; --i)
    std::swap(values[i - 1], values[gen.below(i)]);
  return values;
}

std::vector<float> run_forward(pooling& layer, const std::vector<float>& in, std::size_t batch) {
  layer.reserve(batch);
  std::vector<float> out(batch * layer.output_shape().size());
  layer.forward(in, out, batch, pass::training);
  return out;
}

void check_pooling_gradients(pooling_kind reduction, shape input, std::size_t kernel,
                             std::size_t stride, std::size_t padding) {
  const std::size_t batch = 2;
  check_gradients(
    [&] { return std::make_unique<pooling>(input, reduction, kernel, stride, padding); },
    tie_free_values(batch * input.size(), 5), {.batch = batch, .epsilon = 1e-2});
}

} // namespace

BOOST_AUTO_TEST_CASE(output_shape_keeps_channels) {
  pooling layer({3, 7, 6}, pooling_kind::max, 3, 2, 1);
  BOOST_TEST(layer.kind() == "max_pooling");
  BOOST_TEST((layer.output_shape() == shape{3, 4, 3}));
  BOOST_TEST(layer.parameter_count() == 0u);
  BOOST_TEST(pooling({1, 4, 4}, pooling_kind::average, 2, 2, 0).kind() == "average_pooling");
}

BOOST_AUTO_TEST_CASE(padding_not_smaller_than_kernel_is_rejected) {
  BOOST_CHECK_THROW(pooling({1, 4, 4}, pooling_kind::max, 2, 2, 2), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(max_pooling_takes_window_maxima_and_padding_never_wins) {
  // 1 channel 3x3 of negative values, kernel 2, stride 2, padding 1: windows hold one, two
  // or four real inputs, and every maximum is negative although padding would be zero.
  pooling layer({1, 3, 3}, pooling_kind::max, 2, 2, 1);
  const std::vector<float> in{-1, -2, -3, -4, -5, -6, -7, -8, -9};
  const auto out = run_forward(layer, in, 1);
  const std::vector<float> expected{-1, -2, -4, -5};
  BOOST_TEST(out == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(average_pooling_counts_padding_as_zeros) {
  pooling layer({1, 3, 3}, pooling_kind::average, 2, 2, 1);
  const std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto out = run_forward(layer, in, 1);
  const std::vector<float> expected{1.0f / 4, (2.0f + 3) / 4, (4.0f + 7) / 4,
                                    (5.0f + 6 + 8 + 9) / 4};
  BOOST_TEST(out == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(max_pooling_gradients_match) {
  check_pooling_gradients(pooling_kind::max, {2, 5, 5}, 2, 2, 0);
}

BOOST_AUTO_TEST_CASE(max_pooling_gradients_match_with_overlap_and_padding) {
  check_pooling_gradients(pooling_kind::max, {2, 5, 4}, 3, 2, 1);
}

BOOST_AUTO_TEST_CASE(average_pooling_gradients_match) {
  check_pooling_gradients(pooling_kind::average, {2, 4, 4}, 2, 2, 0);
}

BOOST_AUTO_TEST_CASE(average_pooling_gradients_match_with_overlap_and_padding) {
  check_pooling_gradients(pooling_kind::average, {3, 5, 4}, 3, 2, 1);
}

BOOST_AUTO_TEST_CASE(training_forward_beyond_reserved_batch_is_a_logic_error) {
  pooling layer({1, 2, 2}, pooling_kind::max, 2, 2, 0);
  layer.reserve(1);
  std::vector<float> in(8), out(2);
  BOOST_CHECK_THROW(layer.forward(in, out, 2, pass::training), std::logic_error);
}
