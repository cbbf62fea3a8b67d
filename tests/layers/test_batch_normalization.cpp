#define BOOST_TEST_MODULE layers_batch_normalization
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/batch_normalization.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;
using strom::compute::testing::random_values;

namespace {

constexpr float momentum = 0.9f;
constexpr float epsilon = 1e-5f;

/// A layer with its own initialised buffers.
struct fixture {
  explicit fixture(shape sample, std::size_t max_batch)
    : layer(sample, momentum, epsilon),
      params(layer.parameter_count()),
      grads(layer.parameter_count()),
      state(layer.state_count()) {
    rng gen(1);
    layer.initialize(params, state, gen);
    layer.bind(params, grads, state);
    layer.reserve(max_batch);
  }
  batch_normalization layer;
  std::vector<float> params, grads, state;
};

/// Mean and biased variance of channel c over the batch, height and width.
std::pair<double, double> channel_moments(const std::vector<float>& values, shape sample,
                                          std::size_t batch, std::size_t c) {
  const std::size_t plane = sample.height * sample.width;
  double total = 0.0, squares = 0.0;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < plane; ++i) {
      const double v = values[b * sample.size() + c * plane + i];
      total += v;
      squares += v * v;
    }
  const double n = static_cast<double>(batch * plane);
  const double mean = total / n;
  return {mean, squares / n - mean * mean};
}

} // namespace

BOOST_AUTO_TEST_CASE(layout_and_initial_values) {
  fixture f({3, 2, 2}, 1);
  BOOST_TEST(f.layer.kind() == "batch_normalization");
  BOOST_TEST(f.params == (std::vector<float>{1, 1, 1, 0, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(f.state == (std::vector<float>{0, 0, 0, 1, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(f.layer.regularized_range().end == 0u);
}

BOOST_AUTO_TEST_CASE(training_normalises_each_channel_with_batch_statistics) {
  const shape sample{2, 3, 2};
  const std::size_t batch = 4;
  fixture f(sample, batch);
  f.params = {2.0f, 0.5f, 1.0f, -1.0f};  // gamma, beta
  rng gen(3);
  auto in = random_values(batch * sample.size(), gen, -3.0f, 5.0f);
  std::vector<float> out(in.size());
  f.layer.forward(in, out, batch, pass::training);
  for (std::size_t c = 0; c < 2; ++c) {
    const auto [mean, variance] = channel_moments(out, sample, batch, c);
    BOOST_TEST(mean == f.params[2 + c], boost::test_tools::tolerance(1e-4));
    BOOST_TEST(variance == f.params[c] * f.params[c], boost::test_tools::tolerance(1e-3));
  }
}

BOOST_AUTO_TEST_CASE(training_updates_running_statistics_with_unbiased_variance) {
  const shape sample{1, 2, 1};
  fixture f(sample, 2);
  const std::vector<float> in{1.0f, 2.0f, 3.0f, 6.0f};  // mean 3, unbiased variance 14/3
  std::vector<float> out(in.size());
  f.layer.forward(in, out, 2, pass::training);
  BOOST_TEST(f.state[0] == (1.0f - momentum) * 3.0f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(f.state[1] == momentum * 1.0f + (1.0f - momentum) * 14.0f / 3.0f,
             boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(inference_uses_running_statistics) {
  const shape sample{2, 1, 2};
  fixture f(sample, 3);
  f.params = {1.5f, -0.5f, 0.25f, 2.0f};
  f.state = {0.5f, -1.0f, 4.0f, 0.25f};  // running mean, running variance
  rng gen(4);
  const auto in = random_values(3 * sample.size(), gen);
  std::vector<float> out(in.size());
  f.layer.forward(in, out, 3, pass::inference);
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t i = 0; i < 2; ++i) {
        const std::size_t at = b * 4 + c * 2 + i;
        const float expected =
          (in[at] - f.state[c]) / std::sqrt(f.state[2 + c] + epsilon) * f.params[c] +
          f.params[2 + c];
        BOOST_TEST(out[at] == expected, boost::test_tools::tolerance(1e-5f));
      }
  // Inference leaves the running statistics alone.
  BOOST_TEST(f.state == (std::vector<float>{0.5f, -1.0f, 4.0f, 0.25f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(gradients_match_per_channel) {
  rng gen(5);
  const shape sample{3, 2, 2};
  check_gradients(
    [&] { return std::make_unique<batch_normalization>(sample, momentum, epsilon); },
    random_values(4 * sample.size(), gen), {.batch = 4});
}

BOOST_AUTO_TEST_CASE(gradients_match_per_feature_of_flat_input) {
  rng gen(6);
  const shape sample{5, 1, 1};
  check_gradients(
    [&] { return std::make_unique<batch_normalization>(sample, momentum, epsilon); },
    random_values(6 * sample.size(), gen), {.batch = 6});
}
