#define BOOST_TEST_MODULE updaters_fused_steps
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/codecs/threshold_scan_avx512.hpp"
#include "strom/compute/random.hpp"
#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/adam_scan_avx512.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/rms_prop.hpp"
#include "strom/compute/updaters/sgd.hpp"

using namespace strom::compute;

// apply_step and scan_step are compute_update followed by apply_update or threshold_scan, in
// one pass where the updater has a kernel for it: every bit they write must be what the two
// passes write.

namespace {

std::vector<std::pair<std::string, std::shared_ptr<const updater>>> every_updater() {
  return {{"sgd", std::make_shared<sgd_updater>()},
          {"momentum", std::make_shared<momentum_updater>()},
          {"nesterov", std::make_shared<nesterov_updater>()},
          {"rms_prop", std::make_shared<rms_prop_updater>()},
          {"ada_grad", std::make_shared<ada_grad_updater>()},
          {"adam", std::make_shared<adam_updater>()}};
}

/// Buffers of one updater step on `n` parameters, random but the same for a given seed:
/// gradients of the scale of a late-training gradient, state from a few steps in.
struct step_buffers {
  std::vector<float> gradient, state, parameters, residual, also;

  step_buffers(const updater& rule, std::size_t n, std::uint64_t seed)
    : gradient(n), state(rule.state_size(n)), parameters(n), residual(n), also(n) {
    rng random(seed);
    for (auto& x : gradient) x = random.uniform(-0.05f, 0.05f);
    for (auto& x : state) x = random.uniform(0.0f, 1e-3f);
    for (auto& x : parameters) x = random.uniform(-1.0f, 1.0f);
    for (auto& x : residual) x = random.uniform(-1e-3f, 1e-3f);
    for (auto& x : also) x = random.uniform(-1.0f, 1.0f);
  }
};

constexpr step_context step_seven{.iteration = 6, .epoch = 1, .learning_rate = 0.01f};

/// Sizes around the sixteen-lane blocks of the fused kernels, and one of many blocks.
const std::size_t sizes[] = {1, 15, 16, 17, 33, 4099};

/// scan_step against compute_update then threshold_scan, with and without `also` and at index
/// capacities from none to roomy; `fused` runs the step under test.
void check_scan_step(const std::string& name, const updater& rule,
                     const std::function<std::size_t(step_buffers&, const threshold_scan_args&)>&
                       fused) {
  for (const std::size_t n : sizes)
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{3}, n})
      for (const bool with_also : {false, true}) {
        step_buffers expected(rule, n, 5 + n);
        step_buffers actual(rule, n, 5 + n);
        // About a tenth of the elements reach this threshold.
        const float threshold = 1.5e-3f;
        std::vector<std::int32_t> expected_indices(capacity), indices(capacity);
        rule.compute_update(expected.gradient, expected.state, step_seven);
        const auto expected_hits = threshold_scan(
          expected.residual, expected.gradient, threshold, expected_indices, -1.0f,
          with_also ? std::span<float>{expected.also} : std::span<float>{});
        const auto hits = fused(actual, {actual.residual, threshold, indices, -1.0f,
                                         with_also ? std::span<float>{actual.also}
                                                   : std::span<float>{}});
        const std::size_t listed = std::min(hits, capacity);
        BOOST_TEST_CONTEXT(name << " n=" << n << " capacity=" << capacity
                                << " also=" << with_also) {
          BOOST_TEST(hits == expected_hits);
          BOOST_TEST(std::vector<std::int32_t>(indices.begin(), indices.begin() + listed) ==
                       std::vector<std::int32_t>(expected_indices.begin(),
                                                 expected_indices.begin() + listed),
                     boost::test_tools::per_element());
          BOOST_TEST(actual.residual == expected.residual, boost::test_tools::per_element());
          BOOST_TEST(actual.also == expected.also, boost::test_tools::per_element());
          BOOST_TEST(actual.state == expected.state, boost::test_tools::per_element());
        }
      }
}

} // namespace

BOOST_AUTO_TEST_CASE(apply_step_is_compute_update_then_apply_update_bit_for_bit) {
  for (const auto& [name, rule] : every_updater())
    for (const std::size_t n : sizes) {
      step_buffers expected(*rule, n, n);
      step_buffers actual(*rule, n, n);
      rule->compute_update(expected.gradient, expected.state, step_seven);
      apply_update(expected.parameters, expected.gradient);
      rule->apply_step(actual.gradient, actual.state, step_seven, actual.parameters);
      BOOST_TEST_CONTEXT(name << " n=" << n) {
        BOOST_TEST(actual.parameters == expected.parameters, boost::test_tools::per_element());
        BOOST_TEST(actual.state == expected.state, boost::test_tools::per_element());
      }
    }
}

BOOST_AUTO_TEST_CASE(scan_step_is_compute_update_then_threshold_scan_bit_for_bit) {
  for (const auto& [name, rule] : every_updater())
    check_scan_step(name, *rule, [&rule](step_buffers& b, const threshold_scan_args& scan) {
      return rule->scan_step(b.gradient, b.state, step_seven, scan);
    });
}

BOOST_AUTO_TEST_CASE(adams_avx512_scan_is_compute_update_then_threshold_scan_bit_for_bit) {
  if (!cpu_has_avx512f()) {
    BOOST_TEST_MESSAGE("skipped: this CPU has no AVX-512F (Adam's scan_step runs two passes)");
    return;
  }
  const adam_updater adam;
  // The constants adam_updater uses at step_seven (its bias corrections, t = 7).
  const adam_options o = adam.options();
  const adam_step_constants constants{
    o.beta1, o.beta2, o.epsilon,
    step_seven.learning_rate * static_cast<float>(1.0 / (1.0 - std::pow(double{o.beta1}, 7.0))),
    static_cast<float>(1.0 / (1.0 - std::pow(double{o.beta2}, 7.0)))};
  check_scan_step("adam avx512", adam, [&](step_buffers& b, const threshold_scan_args& scan) {
    const std::size_t n = b.gradient.size();
    return *adam_scan_avx512(b.gradient, std::span{b.state}.first(n),
                             std::span{b.state}.subspan(n), constants, scan);
  });
}

BOOST_AUTO_TEST_CASE(refuses_parameters_or_a_residual_of_another_size) {
  for (const auto& [name, rule] : every_updater()) {
    step_buffers b(*rule, 8, 1);
    std::vector<float> short_buffer(7);
    BOOST_TEST_CONTEXT(name) {
      BOOST_CHECK_THROW(rule->apply_step(b.gradient, b.state, step_seven, short_buffer),
                        std::invalid_argument);
      BOOST_CHECK_THROW(
        rule->scan_step(b.gradient, b.state, step_seven, {short_buffer, 1.0f, {}, 1.0f, {}}),
        std::invalid_argument);
      BOOST_CHECK_THROW(
        rule->scan_step(b.gradient, b.state, step_seven, {b.residual, 1.0f, {}, 1.0f, short_buffer}),
        std::invalid_argument);
    }
  }
}
