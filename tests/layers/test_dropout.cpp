#define BOOST_TEST_MODULE layers_dropout
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/dropout.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;
using strom::compute::testing::random_values;

namespace {

/// The layer bound to a fresh count of masks drawn (state_count floats), as a model binds it.
struct bound_dropout {
  dropout layer;
  std::vector<float> state = std::vector<float>(2, 0.0f);
  bound_dropout(shape input, float rate, std::uint64_t seed) : layer(input, rate, seed) {
    layer.bind({}, {}, state);
  }
};

std::vector<float> training_forward(dropout& layer, const std::vector<float>& in) {
  layer.reserve(1);
  std::vector<float> out(in.size());
  layer.forward(in, out, 1, pass::training);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(rate_outside_unit_interval_is_rejected) {
  BOOST_CHECK_THROW(dropout({4, 1, 1}, 1.0f, 1), std::invalid_argument);
  BOOST_CHECK_THROW(dropout({4, 1, 1}, -0.1f, 1), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(inference_is_identity) {
  dropout layer({6, 1, 1}, 0.5f, 3);
  layer.reserve(2);
  rng gen(1);
  const auto in = random_values(12, gen);
  std::vector<float> out(12);
  layer.forward(in, out, 2, pass::inference);
  BOOST_TEST(out == in, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(training_drops_at_the_rate_and_scales_the_kept) {
  const float rate = 0.3f;
  const std::size_t n = 100000;
  bound_dropout bound({n, 1, 1}, rate, 9);
  const std::vector<float> in(n, 2.0f);
  const auto out = training_forward(bound.layer, in);
  std::size_t dropped = 0;
  for (float v : out) {
    if (v == 0.0f)
      ++dropped;
    else
      BOOST_REQUIRE_CLOSE(v, 2.0f / (1.0f - rate), 1e-4);
  }
  // Binomial standard deviation sqrt(n p (1 - p)) is about 145; allow 5 of them.
  BOOST_TEST(std::abs(static_cast<double>(dropped) - rate * n) < 5 * 145.0);
}

BOOST_AUTO_TEST_CASE(same_seed_gives_same_mask_and_masks_change_between_steps) {
  bound_dropout a({64, 1, 1}, 0.5f, 42);
  bound_dropout b({64, 1, 1}, 0.5f, 42);
  const std::vector<float> in(64, 1.0f);
  const auto first = training_forward(a.layer, in);
  BOOST_TEST(first == training_forward(b.layer, in), boost::test_tools::per_element());
  BOOST_TEST(first != training_forward(a.layer, in));
  BOOST_TEST(a.state[0] == 128.0f);  // two masks of 64
}

BOOST_AUTO_TEST_CASE(a_layer_given_another_s_count_draws_the_masks_it_would_have_drawn) {
  // What a resumed run relies on: the count in the layer state, not the layer object,
  // decides the next mask.
  bound_dropout trained({64, 1, 1}, 0.5f, 7);
  const std::vector<float> in(64, 1.0f);
  for (int step = 0; step < 3; ++step)
    training_forward(trained.layer, in);
  bound_dropout resumed({64, 1, 1}, 0.5f, 7);
  resumed.state = trained.state;
  resumed.layer.bind({}, {}, resumed.state);
  const auto expected = training_forward(trained.layer, in);
  BOOST_TEST(training_forward(resumed.layer, in) == expected, boost::test_tools::per_element());
  // Counts past 2^24 are kept exactly in the two halves.
  trained.state = {16777215.0f, 0.0f};
  trained.layer.bind({}, {}, trained.state);
  training_forward(trained.layer, in);
  BOOST_TEST(trained.state[0] == 63.0f);
  BOOST_TEST(trained.state[1] == 1.0f);
}

BOOST_AUTO_TEST_CASE(gradients_match_with_a_fixed_mask) {
  rng gen(2);
  const shape sample{2, 3, 3};
  check_gradients([&] { return std::make_unique<dropout>(sample, 0.4f, 77); },
                  random_values(3 * sample.size(), gen), {.batch = 3});
}
