#define BOOST_TEST_MODULE cuda_updater_conformance
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/random.hpp"
#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/l2_regularization.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/rms_prop.hpp"
#include "strom/compute/updaters/sgd.hpp"
#include "cuda/device_data.hpp"
#include "support/gpu.hpp"

using namespace strom::compute;
using strom::compute::cuda::cuda_context;
using strom::compute::cuda::device_buffer;
using strom::compute::testing::random_values;
using strom::compute::testing::relative_l2;
using strom::compute::testing::to_device;
using strom::compute::testing::to_host;

// Every device updater against its host updater, over several chained steps. The kernels
// round after each operation in the host's order (no FMA contraction, IEEE square root and
// division), so the figures are expected to be exactly equal; the 1e-6 relative L2 bound
// only leaves room for a host build whose compiler contracts into FMAs (-march=native).

namespace {

/// The largest relative L2 error allowed where the arithmetic is identical element-wise.
constexpr double identical_arithmetic = 1e-6;

/// Sizes around the 256-thread blocks and one of many blocks with a tail.
const std::size_t sizes[] = {1, 255, 256, 257, 10007};

/// Steps that exercise Adam's bias correction early and late, and changing learning rates
/// (as a schedule hands them over).
const step_context steps[] = {{.iteration = 0, .epoch = 0, .learning_rate = 0.1f},
                              {.iteration = 1, .epoch = 0, .learning_rate = 0.05f},
                              {.iteration = 2, .epoch = 0, .learning_rate = 0.02f},
                              {.iteration = 7, .epoch = 1, .learning_rate = 0.01f},
                              {.iteration = 1000, .epoch = 9, .learning_rate = 0.003f}};

/// Every updater with a device version, with options away from the defaults so that a device
/// updater that ignored them would show.
std::vector<std::pair<std::string, std::shared_ptr<const updater>>> every_updater() {
  return {{"sgd", std::make_shared<sgd_updater>()},
          {"momentum", std::make_shared<momentum_updater>(momentum_options{.momentum = 0.85f})},
          {"nesterov", std::make_shared<nesterov_updater>(momentum_options{.momentum = 0.95f})},
          {"adam", std::make_shared<adam_updater>(
                     adam_options{.beta1 = 0.8f, .beta2 = 0.99f, .epsilon = 1e-7f})},
          {"ada_grad", std::make_shared<ada_grad_updater>(ada_grad_options{.epsilon = 1e-5f})},
          {"rms_prop", std::make_shared<rms_prop_updater>(
                         rms_prop_options{.decay = 0.9f, .epsilon = 1e-7f})}};
}

/// Host and device buffers of one updater on `n` parameters, from the same random start:
/// state from a few steps in (never zeros, which would hide a misread state), parameters
/// of an initialised layer.
struct both_sides {
  std::vector<float> state, parameters;
  device_buffer<float> device_state, device_parameters;

  both_sides(const updater& rule, std::size_t n, rng& random, cuda_context& ctx)
    : state(random_values(rule.state_size(n), random, 1e-5f, 1e-3f)),
      parameters(random_values(n, random)),
      device_state(to_device(state, ctx)),
      device_parameters(to_device(parameters, ctx)) {}
};

/// A rule the CUDA backend has no version of.
class host_only_updater final : public updater {
public:
  std::size_t state_size(std::size_t) const override { return 0; }
  void compute_update(std::span<float>, std::span<float>, const step_context&) const override {}
};

} // namespace

BOOST_AUTO_TEST_CASE(compute_update_matches_the_host_step_after_step,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  for (const auto& [name, rule] : every_updater())
    for (const std::size_t n : sizes) {
      const auto device_rule = cuda::make_device_updater(device_updater_spec_of(*rule));
      rng random(17 + n);
      both_sides buffers(*rule, n, random, ctx);
      for (const step_context& step : steps) {
        std::vector<float> update = random_values(n, random, -0.05f, 0.05f);
        auto device_update = to_device(update, ctx);
        rule->compute_update(update, buffers.state, step);
        device_rule->compute_update(device_update.data(), buffers.device_state.data(), n, step,
                                    ctx);
        BOOST_TEST_CONTEXT(name << " n=" << n << " iteration=" << step.iteration) {
          BOOST_TEST(relative_l2(to_host(device_update, ctx), update) < identical_arithmetic);
          if (!buffers.state.empty())
            BOOST_TEST(relative_l2(to_host(buffers.device_state, ctx), buffers.state) <
                       identical_arithmetic);
        }
      }
    }
}

BOOST_AUTO_TEST_CASE(apply_step_matches_the_host_step_after_step,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  for (const auto& [name, rule] : every_updater())
    for (const std::size_t n : sizes) {
      const auto device_rule = cuda::make_device_updater(device_updater_spec_of(*rule));
      rng random(29 + n);
      both_sides buffers(*rule, n, random, ctx);
      for (const step_context& step : steps) {
        std::vector<float> gradient = random_values(n, random, -0.05f, 0.05f);
        auto device_gradient = to_device(gradient, ctx);
        rule->apply_step(gradient, buffers.state, step, buffers.parameters);
        device_rule->apply_step(device_gradient.data(), buffers.device_state.data(),
                                buffers.device_parameters.data(), n, step, ctx);
        BOOST_TEST_CONTEXT(name << " n=" << n << " iteration=" << step.iteration) {
          BOOST_TEST(relative_l2(to_host(buffers.device_parameters, ctx),
                                    buffers.parameters) < identical_arithmetic);
          if (!buffers.state.empty())
            BOOST_TEST(relative_l2(to_host(buffers.device_state, ctx), buffers.state) <
                       identical_arithmetic);
          // Adam's fused step leaves the gradient unspecified; the others leave the update.
          if (name != "adam")
            BOOST_TEST(relative_l2(to_host(device_gradient, ctx), gradient) <
                       identical_arithmetic);
        }
      }
    }
}

BOOST_AUTO_TEST_CASE(an_updater_without_a_device_version_is_refused_by_name,
                     *boost::unit_test::precondition(support::gpu_present)) {
  const host_only_updater rule;
  BOOST_CHECK_EXCEPTION(cuda::make_device_updater(device_updater_spec_of(rule)), std::invalid_argument,
                        [](const std::invalid_argument& error) {
                          return std::string(error.what()).find("host_only_updater") !=
                                 std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(add_l2_matches_the_host_inside_the_ranges_only,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  constexpr std::size_t n = 10007;
  rng random(41);
  const auto parameters = random_values(n, random, -1.0f, 1.0f);
  std::vector<float> gradients = random_values(n, random, -0.05f, 0.05f);
  // A range from the start, one across block boundaries, an empty one and one to the end.
  const std::vector<float_range> ranges{{0, 100}, {300, 1000}, {1000, 1000}, {5000, n}};
  const auto device_parameters = to_device(parameters, ctx);
  auto device_gradients = to_device(gradients, ctx);
  add_l2(parameters, gradients, ranges, 3e-4f);
  cuda::add_l2(device_parameters.data(), device_gradients.data(), ranges, 3e-4f, ctx);
  const auto actual = to_host(device_gradients, ctx);
  BOOST_TEST(relative_l2(actual, gradients) < identical_arithmetic);
  // Outside the ranges the gradients are untouched, bit for bit.
  BOOST_TEST(actual[150] == gradients[150]);
  BOOST_TEST(actual[4999] == gradients[4999]);
}

BOOST_AUTO_TEST_CASE(add_l2_with_a_zero_coefficient_changes_nothing,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  rng random(43);
  const auto parameters = random_values(300, random, -1.0f, 1.0f);
  const auto gradients = random_values(300, random, -0.05f, 0.05f);
  const std::vector<float_range> ranges{{0, 300}};
  const auto device_parameters = to_device(parameters, ctx);
  auto device_gradients = to_device(gradients, ctx);
  cuda::add_l2(device_parameters.data(), device_gradients.data(), ranges, 0.0f, ctx);
  BOOST_TEST(to_host(device_gradients, ctx) == gradients, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(add_l2_refuses_a_reversed_range,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  device_buffer<float> parameters(10), gradients(10);
  const std::vector<float_range> ranges{{6, 4}};
  BOOST_CHECK_THROW(cuda::add_l2(parameters.data(), gradients.data(), ranges, 0.1f, ctx),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(subtract_matches_the_host_apply_update,
                     *boost::unit_test::precondition(support::gpu_present)) {
  cuda_context ctx;
  for (const std::size_t n : sizes) {
    rng random(53 + n);
    std::vector<float> parameters = random_values(n, random, -1.0f, 1.0f);
    const auto update = random_values(n, random, -0.05f, 0.05f);
    auto device_parameters = to_device(parameters, ctx);
    const auto device_update = to_device(update, ctx);
    apply_update(parameters, update);
    cuda::subtract(device_parameters.data(), device_update.data(), n, ctx);
    BOOST_TEST_CONTEXT("n=" << n) {
      BOOST_TEST(relative_l2(to_host(device_parameters, ctx), parameters) <
                 identical_arithmetic);
    }
  }
}
