#define BOOST_TEST_MODULE cuda_layer_conformance
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_data.hpp"
#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_layer.hpp"
#include "strom/compute/device/engine_spec.hpp"
#include "strom/compute/layers/activation.hpp"
#include "strom/compute/layers/batch_normalization.hpp"
#include "strom/compute/layers/convolution.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dense_columns.hpp"
#include "strom/compute/layers/dropout.hpp"
#include "strom/compute/layers/pooling.hpp"
#include "strom/compute/layers/softmax_cross_entropy.hpp"
#include "support/gpu.hpp"

using namespace strom::compute;
using namespace strom::compute::testing;
using boost::unit_test::precondition;

namespace {

/// The largest relative L2 error ||gpu - cpu|| / ||cpu|| accepted: fp32 results whose sums
/// run in another order than the host's (cuBLAS's blocking against OpenBLAS's, tree
/// reductions against lane sums) differ by a few units in the last place, about 1e-6 over
/// the sums of at most a few thousand terms these shapes make.
constexpr double tolerance = 1e-5;

void check_close(const char* what, std::span<const float> device, std::span<const float> host) {
  const double error = relative_l2(device, host);
  BOOST_TEST(error < tolerance, what << ": relative L2 error " << error);
}

/// Runs `host` and its device version on the same seeded data (parameters, state, input and
/// output gradient, none of them zero): a training forward, backward with and without the
/// input gradient, then an inference forward, every device result poisoned beforehand.
void check_conformance(layer& host, shape input, std::size_t batch, std::uint64_t seed = 11) {
  rng gen(seed);
  const std::size_t in_n = batch * input.size();
  const std::size_t out_n = batch * host.output_shape().size();
  const auto parameters = random_values(host.parameter_count(), gen);
  // Positive, so that batch normalisation's running variances are variances.
  const auto state = random_values(host.state_count(), gen, 0.5f, 1.5f);
  const auto in = random_values(in_n, gen);
  const auto dout = random_values(out_n, gen);

  std::vector<float> host_parameters = parameters;
  std::vector<float> host_gradients(parameters.size());
  std::vector<float> host_state = state;
  std::vector<float> host_out(out_n);
  std::vector<float> host_din(in_n);
  std::vector<float> host_inference(out_n);
  host.bind(host_parameters, host_gradients, host_state);
  host.reserve(batch);
  host.forward(in, host_out, batch, pass::training);
  host.backward(in, host_out, dout, host_din, batch);
  host.forward(in, host_inference, batch, pass::inference);

  cuda::cuda_context ctx;
  auto device = cuda::make_device_layer(device_layer_spec_of(host, seed));
  auto d_parameters = to_device(parameters, ctx);
  auto d_state = to_device(state, ctx);
  auto d_gradients = poisoned(parameters.size(), ctx);
  const auto d_in = to_device(in, ctx);
  const auto d_dout = to_device(dout, ctx);
  auto d_out = poisoned(out_n, ctx);
  auto d_din = poisoned(in_n, ctx);
  device->bind(d_parameters.data(), d_gradients.data(), d_state.data());
  device->reserve(batch);
  device->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
  device->backward(d_in.data(), d_out.data(), d_dout.data(), d_din.data(), batch, ctx);
  check_close("training output", to_host(d_out, ctx), host_out);
  check_close("input gradient", to_host(d_din, ctx), host_din);
  if (!parameters.empty())
    check_close("parameter gradients", to_host(d_gradients, ctx), host_gradients);
  if (!state.empty())
    check_close("state after the training pass", to_host(d_state, ctx), host_state);

  if (!parameters.empty()) {
    poison(d_gradients, ctx);
    device->backward(d_in.data(), d_out.data(), d_dout.data(), nullptr, batch, ctx);
    check_close("parameter gradients without an input gradient", to_host(d_gradients, ctx),
                host_gradients);
  }

  auto d_inference = poisoned(out_n, ctx);
  device->forward(d_in.data(), d_inference.data(), batch, pass::inference, ctx);
  check_close("inference output", to_host(d_inference, ctx), host_inference);
}

void check_activation(activation_kind function, float alpha = 0.01f) {
  for (const shape input : {shape{13, 1, 1}, shape{3, 5, 7}}) {
    BOOST_TEST_CONTEXT("input " << input.channels << "x" << input.height << "x" << input.width) {
      activation host(input, function, alpha);
      check_conformance(host, input, 6);
    }
  }
}

struct conv_geometry {
  shape input;
  std::size_t filters, kernel, stride, padding;
};

struct pool_geometry {
  shape input;
  std::size_t kernel, stride, padding;
};

/// stride == kernel and stride < kernel, with and without padding, square and not.
const std::vector<pool_geometry> pool_geometries = {
  {{3, 8, 8}, 2, 2, 0}, {{2, 9, 9}, 3, 3, 0}, {{2, 7, 7}, 3, 2, 1},
  {{3, 6, 6}, 3, 1, 1}, {{1, 5, 5}, 2, 1, 0}, {{2, 8, 7}, 3, 2, 2},
};

void check_pooling(pooling_kind reduction) {
  for (const auto& g : pool_geometries) {
    BOOST_TEST_CONTEXT("input " << g.input.channels << "x" << g.input.height << "x"
                                << g.input.width << ", kernel " << g.kernel << ", stride "
                                << g.stride << ", padding " << g.padding) {
      pooling host(g.input, reduction, g.kernel, g.stride, g.padding);
      check_conformance(host, g.input, 3);
    }
  }
}

/// A dropout layer's device version bound to nothing (dropout has no parameters).
std::unique_ptr<cuda::device_layer> device_dropout(shape input, float rate,
                                                   std::uint64_t seed, std::size_t batch) {
  dropout host(input, rate, seed);
  auto device = cuda::make_device_layer(device_layer_spec_of(host, seed));
  device->bind(nullptr, nullptr, nullptr);
  device->reserve(batch);
  return device;
}

} // namespace

BOOST_AUTO_TEST_CASE(dense_matches_host_layer, *precondition(support::gpu_present)) {
  struct sizes {
    shape input;
    std::size_t units, batch;
  };
  for (const auto& s : {sizes{{37, 1, 1}, 13, 5}, sizes{{1, 1, 1}, 1, 1},
                        sizes{{128, 1, 1}, 64, 32}, sizes{{3, 4, 5}, 7, 3}}) {
    BOOST_TEST_CONTEXT(s.input.size() << " -> " << s.units << ", batch " << s.batch) {
      dense host(s.input, s.units, weight_init::xavier);
      check_conformance(host, s.input, s.batch);
    }
  }
}

BOOST_AUTO_TEST_CASE(relu_matches_host_layer, *precondition(support::gpu_present)) {
  check_activation(activation_kind::relu);
}

BOOST_AUTO_TEST_CASE(leaky_relu_matches_host_layer, *precondition(support::gpu_present)) {
  check_activation(activation_kind::leaky_relu, 0.1f);
}

BOOST_AUTO_TEST_CASE(tanh_matches_host_layer, *precondition(support::gpu_present)) {
  check_activation(activation_kind::tanh);
}

BOOST_AUTO_TEST_CASE(sigmoid_matches_host_layer, *precondition(support::gpu_present)) {
  check_activation(activation_kind::sigmoid);
}

BOOST_AUTO_TEST_CASE(convolution_matches_host_layer_over_kernels_strides_and_padding,
                     *precondition(support::gpu_present)) {
  const std::vector<conv_geometry> geometries = {
    {{1, 7, 7}, 4, 3, 1, 0},   {{3, 8, 8}, 5, 3, 1, 1},  {{3, 9, 9}, 2, 3, 2, 1},
    {{3, 6, 6}, 4, 1, 1, 0},   {{1, 11, 11}, 3, 5, 2, 0}, {{3, 10, 10}, 6, 5, 1, 2},
    {{2, 7, 5}, 3, 3, 2, 0},   {{3, 5, 5}, 2, 1, 2, 1},  {{1, 6, 6}, 2, 5, 2, 1},
  };
  for (const auto& g : geometries) {
    BOOST_TEST_CONTEXT("input " << g.input.channels << "x" << g.input.height << "x"
                                << g.input.width << ", " << g.filters << " filters, kernel "
                                << g.kernel << ", stride " << g.stride << ", padding "
                                << g.padding) {
      convolution host(g.input, g.filters, g.kernel, g.stride, g.padding, weight_init::he);
      check_conformance(host, g.input, 4);
    }
  }
}

BOOST_AUTO_TEST_CASE(max_pooling_matches_host_layer, *precondition(support::gpu_present)) {
  check_pooling(pooling_kind::max);
}

BOOST_AUTO_TEST_CASE(average_pooling_matches_host_layer, *precondition(support::gpu_present)) {
  check_pooling(pooling_kind::average);
}

BOOST_AUTO_TEST_CASE(batch_normalization_matches_host_layer_and_its_running_statistics,
                     *precondition(support::gpu_present)) {
  struct sizes {
    shape input;
    std::size_t batch;
  };
  for (const auto& s : {sizes{{6, 1, 1}, 16}, sizes{{3, 5, 5}, 4}, sizes{{4, 8, 8}, 2},
                        sizes{{2, 3, 3}, 1}}) {
    BOOST_TEST_CONTEXT("input " << s.input.channels << "x" << s.input.height << "x"
                                << s.input.width << ", batch " << s.batch) {
      batch_normalization host(s.input, 0.9f, 1e-5f);
      check_conformance(host, s.input, s.batch);
    }
  }
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_matches_host_loss_and_gradient,
                     *precondition(support::gpu_present)) {
  struct sizes {
    std::size_t batch, classes;
  };
  // Batches past 32 samples give the kernel's warps more than one sample each.
  for (const auto& s : {sizes{7, 10}, sizes{1, 2}, sizes{33, 37}, sizes{100, 3},
                        sizes{64, 1000}}) {
    BOOST_TEST_CONTEXT("batch " << s.batch << ", " << s.classes << " classes") {
      rng gen(5);
      const auto logits = random_values(s.batch * s.classes, gen, -3.0f, 3.0f);
      std::vector<std::int32_t> labels(s.batch);
      for (auto& label : labels)
        label = static_cast<std::int32_t>(gen.below(s.classes));
      std::vector<float> host_gradient(logits.size());
      const float host_loss =
        softmax_cross_entropy(logits, labels, s.batch, s.classes, host_gradient);

      cuda::cuda_context ctx;
      const auto d_logits = to_device(logits, ctx);
      const auto d_labels = to_device(labels, ctx);
      auto d_gradient = poisoned(logits.size(), ctx);
      auto d_loss = poisoned(1, ctx);
      cuda::softmax_cross_entropy(d_logits.data(), d_labels.data(), s.batch, s.classes,
                                  d_gradient.data(), d_loss.data(), ctx);
      check_close("loss", to_host(d_loss, ctx), std::vector<float>{host_loss});
      check_close("logits gradient", to_host(d_gradient, ctx), host_gradient);
    }
  }
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_loss_needs_no_gradient_buffer,
                     *precondition(support::gpu_present)) {
  rng gen(9);
  const std::size_t batch = 40;
  const std::size_t classes = 10;
  const auto logits = random_values(batch * classes, gen, -3.0f, 3.0f);
  std::vector<std::int32_t> labels(batch);
  for (auto& label : labels)
    label = static_cast<std::int32_t>(gen.below(classes));
  const float host_loss = softmax_cross_entropy(logits, labels, batch, classes, {});

  cuda::cuda_context ctx;
  const auto d_logits = to_device(logits, ctx);
  const auto d_labels = to_device(labels, ctx);
  auto d_loss = poisoned(1, ctx);
  cuda::softmax_cross_entropy(d_logits.data(), d_labels.data(), batch, classes, nullptr,
                              d_loss.data(), ctx);
  check_close("loss", to_host(d_loss, ctx), std::vector<float>{host_loss});
}

BOOST_AUTO_TEST_CASE(dropout_inference_copies_the_input_exactly,
                     *precondition(support::gpu_present)) {
  const shape input{50, 3, 3};
  const std::size_t batch = 8;
  rng gen(3);
  const auto in = random_values(batch * input.size(), gen);
  cuda::cuda_context ctx;
  auto device = device_dropout(input, 0.5f, 21, batch);
  const auto d_in = to_device(in, ctx);
  auto d_out = poisoned(in.size(), ctx);
  device->forward(d_in.data(), d_out.data(), batch, pass::inference, ctx);
  BOOST_TEST(to_host(d_out, ctx) == in, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dropout_training_drops_about_rate_and_scales_the_rest_exactly,
                     *precondition(support::gpu_present)) {
  const shape input{1 << 16, 1, 1};
  const std::size_t batch = 16;
  const std::size_t n = batch * input.size();
  for (const float rate : {0.1f, 0.3f, 0.5f, 0.9f}) {
    BOOST_TEST_CONTEXT("rate " << rate) {
      rng gen(4);
      // No input is zero, so a zero output is a dropped element.
      const auto in = random_values(n, gen, 0.5f, 1.5f);
      cuda::cuda_context ctx;
      auto device = device_dropout(input, rate, 33, batch);
      const auto d_in = to_device(in, ctx);
      auto d_out = poisoned(n, ctx);
      device->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
      const auto out = to_host(d_out, ctx);
      const float keep_scale = 1.0f / (1.0f - rate);
      std::size_t dropped = 0;
      std::size_t wrongly_scaled = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (out[i] == 0.0f)
          ++dropped;
        else if (out[i] != in[i] * keep_scale)
          ++wrongly_scaled;
      }
      BOOST_TEST(wrongly_scaled == 0u);
      // Dropped elements are binomial(n, rate): within 5 standard deviations of n * rate.
      const double expected = static_cast<double>(n) * rate;
      const double deviation = std::sqrt(expected * (1.0 - rate));
      BOOST_TEST(std::abs(static_cast<double>(dropped) - expected) < 5.0 * deviation,
                 dropped << " of " << n << " dropped, expected about " << expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(dropout_backward_uses_the_forward_mask,
                     *precondition(support::gpu_present)) {
  const shape input{64, 4, 4};
  const std::size_t batch = 32;
  const std::size_t n = batch * input.size();
  const float rate = 0.4f;
  rng gen(6);
  const auto in = random_values(n, gen, 0.5f, 1.5f);
  const auto dout = random_values(n, gen, 0.5f, 1.5f);
  cuda::cuda_context ctx;
  auto device = device_dropout(input, rate, 44, batch);
  const auto d_in = to_device(in, ctx);
  const auto d_dout = to_device(dout, ctx);
  auto d_out = poisoned(n, ctx);
  auto d_din = poisoned(n, ctx);
  device->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
  device->backward(d_in.data(), d_out.data(), d_dout.data(), d_din.data(), batch, ctx);
  const auto out = to_host(d_out, ctx);
  const auto din = to_host(d_din, ctx);
  const float keep_scale = 1.0f / (1.0f - rate);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float expected = out[i] == 0.0f ? 0.0f : dout[i] * keep_scale;
    mismatches += din[i] == expected ? 0 : 1;
  }
  BOOST_TEST(mismatches == 0u);
}

BOOST_AUTO_TEST_CASE(dropout_masks_change_every_pass_and_repeat_from_the_seed,
                     *precondition(support::gpu_present)) {
  const shape input{256, 1, 1};
  const std::size_t batch = 16;
  const std::size_t n = batch * input.size();
  rng gen(8);
  const auto in = random_values(n, gen, 0.5f, 1.5f);
  cuda::cuda_context ctx;
  auto first = device_dropout(input, 0.5f, 55, batch);
  auto twin = device_dropout(input, 0.5f, 55, batch);
  const auto d_in = to_device(in, ctx);
  auto d_out = poisoned(n, ctx);
  first->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
  const auto first_pass = to_host(d_out, ctx);
  first->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
  const auto second_pass = to_host(d_out, ctx);
  twin->forward(d_in.data(), d_out.data(), batch, pass::training, ctx);
  const auto twin_pass = to_host(d_out, ctx);
  BOOST_TEST((first_pass != second_pass));
  BOOST_TEST(first_pass == twin_pass, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dense_columns_has_no_device_version, *precondition(support::gpu_present)) {
  dense_columns host(8, 6, 0, 3, weight_init::xavier);
  try {
    cuda::make_device_layer(device_layer_spec_of(host, 1));
    BOOST_ERROR("make_device_layer accepted dense_columns");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("dense_columns") != std::string::npos, e.what());
  }
}
