#define BOOST_TEST_MODULE layers_convolution
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/convolution.hpp"

using namespace strom::compute;
using strom::compute::testing::check_gradients;
using strom::compute::testing::random_values;

namespace {

struct geometry {
  shape input;
  std::size_t filters, kernel, stride, padding;
};

/// The convolution written out as its definition, zero padding by bounds checks.
std::vector<float> naive_convolution(const std::vector<float>& in,
                                     const std::vector<float>& params, std::size_t batch,
                                     const geometry& g, shape out) {
  const std::size_t k = g.kernel;
  const std::size_t c_in = g.input.channels;
  std::vector<float> result(batch * out.size());
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t f = 0; f < g.filters; ++f)
      for (std::size_t oy = 0; oy < out.height; ++oy)
        for (std::size_t ox = 0; ox < out.width; ++ox) {
          double total = params[g.filters * c_in * k * k + f];
          for (std::size_t c = 0; c < c_in; ++c)
            for (std::size_t ky = 0; ky < k; ++ky)
              for (std::size_t kx = 0; kx < k; ++kx) {
                const auto iy = static_cast<long>(oy * g.stride + ky) - static_cast<long>(g.padding);
                const auto ix = static_cast<long>(ox * g.stride + kx) - static_cast<long>(g.padding);
                if (iy < 0 || ix < 0 || iy >= static_cast<long>(g.input.height) ||
                    ix >= static_cast<long>(g.input.width))
                  continue;
                const float x = in[b * g.input.size() +
                                   (c * g.input.height + static_cast<std::size_t>(iy)) *
                                     g.input.width +
                                   static_cast<std::size_t>(ix)];
                total += static_cast<double>(x) * params[((f * c_in + c) * k + ky) * k + kx];
              }
          result[b * out.size() + (f * out.height + oy) * out.width + ox] =
            static_cast<float>(total);
        }
  return result;
}

void check_forward_against_naive(const geometry& g, std::size_t batch) {
  convolution layer(g.input, g.filters, g.kernel, g.stride, g.padding, weight_init::xavier);
  rng gen(17);
  auto params = random_values(layer.parameter_count(), gen);
  std::vector<float> grads(params.size());
  layer.bind(params, grads, {});
  layer.reserve(batch);
  const auto in = random_values(batch * g.input.size(), gen);
  std::vector<float> out(batch * layer.output_shape().size());
  layer.forward(in, out, batch, pass::inference);
  const auto expected = naive_convolution(in, params, batch, g, layer.output_shape());
  for (std::size_t i = 0; i < out.size(); ++i)
    BOOST_TEST(std::abs(out[i] - expected[i]) <= 1e-5f * (1.0f + std::abs(expected[i])));
}

void check_convolution_gradients(const geometry& g) {
  rng gen(23);
  const std::size_t batch = 2;
  check_gradients(
    [&] {
      return std::make_unique<convolution>(g.input, g.filters, g.kernel, g.stride, g.padding,
                                           weight_init::he);
    },
    random_values(batch * g.input.size(), gen), {.batch = batch});
}

} // namespace

BOOST_AUTO_TEST_CASE(output_shape_follows_kernel_stride_and_padding) {
  convolution layer({3, 7, 6}, 4, 3, 2, 1, weight_init::he);
  BOOST_TEST(layer.kind() == "convolution");
  BOOST_TEST((layer.output_shape() == shape{4, 4, 3}));
  BOOST_TEST(layer.parameter_count() == 4u * 3u * 9u + 4u);
  BOOST_TEST(layer.regularized_range().end == 4u * 3u * 9u);
}

BOOST_AUTO_TEST_CASE(kernel_larger_than_padded_input_is_rejected) {
  BOOST_CHECK_THROW(convolution({1, 2, 2}, 1, 5, 1, 1, weight_init::he), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(forward_matches_naive_reference_stride_1_padding_0) {
  check_forward_against_naive({{2, 6, 5}, 3, 3, 1, 0}, 3);
}

BOOST_AUTO_TEST_CASE(forward_matches_naive_reference_stride_2_padding_1) {
  check_forward_against_naive({{3, 7, 8}, 4, 3, 2, 1}, 2);
}

BOOST_AUTO_TEST_CASE(forward_matches_naive_reference_pointwise_kernel) {
  check_forward_against_naive({{3, 4, 5}, 2, 1, 1, 0}, 2);
}

BOOST_AUTO_TEST_CASE(gradients_match_stride_1_padding_0) {
  check_convolution_gradients({{2, 5, 5}, 3, 3, 1, 0});
}

BOOST_AUTO_TEST_CASE(gradients_match_stride_1_padding_1) {
  check_convolution_gradients({{2, 5, 4}, 3, 3, 1, 1});
}

BOOST_AUTO_TEST_CASE(gradients_match_stride_2_padding_0) {
  check_convolution_gradients({{3, 6, 7}, 2, 3, 2, 0});
}

BOOST_AUTO_TEST_CASE(gradients_match_stride_2_padding_1) {
  check_convolution_gradients({{2, 6, 6}, 3, 2, 2, 1});
}

BOOST_AUTO_TEST_CASE(gradients_match_pointwise_kernel) {
  check_convolution_gradients({{3, 3, 4}, 2, 1, 1, 0});
}
