#define BOOST_TEST_MODULE codecs_calibrated_blocks
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/encoders/calibrated_blocks.hpp"
#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/sent_elements.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"

using namespace strom::compute;

namespace {

/// Values of N(0, sigma) from `seed`.
std::vector<float> normal_values(std::size_t n, float sigma, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> values(n);
  for (auto& v : values)
    v = normal(generator);
  return values;
}

/// What `message` adds to a zero buffer of `n` elements, checked as a receiver checks it.
std::vector<float> decoded(const encoded_update& message, std::size_t n) {
  std::vector<float> target(n, 0.0f);
  auto ok = decode_add(message.enc, message.threshold, message.payload, target);
  BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.err().message));
  return target;
}

double sum_abs(const std::vector<float>& values, std::size_t begin, std::size_t end) {
  double sum = 0.0;
  for (std::size_t i = begin; i < end; ++i)
    sum += std::fabs(values[i]);
  return sum;
}

} // namespace

BOOST_AUTO_TEST_CASE(each_tensor_gets_its_own_threshold_and_its_mass_arrives) {
  // Two large tensors whose updates differ by 1000x: one threshold each, about 1% sent of
  // each, and every sent element carries its tensor's mean sent magnitude.
  const std::size_t n = 200000;
  auto residual = normal_values(n, 1.0f, 1);
  for (std::size_t i = n / 2; i < n; ++i)
    residual[i] *= 1e-3f;
  const auto before = residual;
  calibrated_blocks blocks(n, {{0, n / 2}, {n / 2, n / 2}}, {});
  const auto message = blocks.encode(residual, 0);
  BOOST_REQUIRE(message);
  BOOST_TEST((message->enc == encoding::blocks));
  const auto figures = blocks.figures();
  BOOST_REQUIRE(figures.size() == 2u);
  BOOST_TEST(figures[1].threshold / figures[0].threshold == 1e-3f,
             boost::test_tools::tolerance(0.15f));
  for (const auto& f : figures) {
    const double density = static_cast<double>(f.values_sent) / static_cast<double>(f.count);
    BOOST_TEST(density > 0.007);
    BOOST_TEST(density < 0.014);
    BOOST_TEST(f.scale > f.threshold);  // the mean of what reached the threshold
  }
  // Nothing is lost: what arrived plus what stayed is what was there, tensor by tensor, and
  // the mass sent is the mass of the elements that reached the threshold.
  const auto arrived = decoded(*message, n);
  for (std::size_t i = 0; i < n; ++i)
    BOOST_TEST(arrived[i] + residual[i] == before[i], boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(sum_abs(arrived, 0, n / 2) == figures[0].sent_mass, boost::test_tools::tolerance(1e-4));
  BOOST_TEST(sum_abs(arrived, n / 2, n) == figures[1].sent_mass, boost::test_tools::tolerance(1e-4));
}

BOOST_AUTO_TEST_CASE(small_tensors_go_dense_in_fp16_keeping_the_rounding) {
  const std::size_t n = 1000;
  auto residual = normal_values(n, 0.01f, 2);
  const auto before = residual;
  calibrated_blocks blocks(n, {{0, 900}, {900, 100}}, {});
  const auto message = blocks.encode(residual, 0);
  BOOST_REQUIRE(message);
  BOOST_TEST(message->values == n);
  for (const auto& f : blocks.figures())
    BOOST_TEST((f.last_encoding == encoding::dense_fp16));
  const auto arrived = decoded(*message, n);
  for (std::size_t i = 0; i < n; ++i) {
    BOOST_TEST(arrived[i] + residual[i] == before[i]);  // exact: the rounding stayed
    // fp16's rounding: relative above its normal range, half its smallest step below it.
    BOOST_TEST(std::fabs(residual[i]) <= std::max(std::fabs(before[i]) * 1e-3f, 3e-8f));
  }
}

BOOST_AUTO_TEST_CASE(a_tensor_of_constants_goes_as_a_bitmap_of_the_constant) {
  const std::size_t n = 40000;
  std::vector<float> residual(n, 0.5f);
  calibrated_blocks blocks(n, {}, {});
  const auto message = blocks.encode(residual, 0);
  BOOST_REQUIRE(message);
  BOOST_TEST((blocks.figures()[0].last_encoding == encoding::bitmap));
  BOOST_TEST(blocks.figures()[0].threshold == 0.5f);
  const auto arrived = decoded(*message, n);
  for (std::size_t i = 0; i < n; ++i) {
    BOOST_TEST(arrived[i] == 0.5f);
    BOOST_TEST(residual[i] == 0.0f);
  }
}

BOOST_AUTO_TEST_CASE(a_tensor_of_zeros_sends_nothing) {
  std::vector<float> residual(40000, 0.0f);
  calibrated_blocks blocks(residual.size(), {}, {});
  BOOST_TEST(!blocks.encode(residual, 0).has_value());
  BOOST_TEST(blocks.last_values() == 0u);
  BOOST_TEST(blocks.figures()[0].values_sent == 0u);
}

BOOST_AUTO_TEST_CASE(extreme_values_stay_finite_and_decodable) {
  std::vector<float> residual = normal_values(50000, 1.0f, 5);
  residual[10] = std::numeric_limits<float>::infinity();
  residual[11] = std::numeric_limits<float>::quiet_NaN();
  residual[12] = -3e38f;
  residual[49000] = 1e-40f;  // subnormal
  std::vector<float> small = {std::numeric_limits<float>::infinity(), 1e30f, -7e4f, 1.0f};
  calibrated_blocks blocks(residual.size(), {}, {});
  const auto message = blocks.encode(residual, 3);
  BOOST_REQUIRE(message);
  decoded(*message, residual.size());
  BOOST_TEST(std::isfinite(blocks.figures()[0].scale));
  calibrated_blocks dense(small.size(), {}, {});
  const auto dense_message = dense.encode(small, 0);
  BOOST_REQUIRE(dense_message);
  const auto arrived = decoded(*dense_message, small.size());
  BOOST_TEST(arrived[0] == 0.0f);      // not finite: not sent
  BOOST_TEST(arrived[1] == 65504.0f);  // fp16 saturates; the rest stays behind
  BOOST_TEST(small[1] == 1e30f - 65504.0f);
}

BOOST_AUTO_TEST_CASE(gaps_between_blocks_are_covered_and_bad_blocks_refused) {
  calibrated_blocks blocks(100, {{10, 20}, {50, 10}}, {});
  const auto figures = blocks.figures();
  BOOST_REQUIRE(figures.size() == 5u);
  BOOST_TEST(figures[0].offset == 0u);
  BOOST_TEST(figures[4].offset == 60u);
  BOOST_TEST(figures[4].count == 40u);
  BOOST_CHECK_THROW(calibrated_blocks(100, {{50, 10}, {10, 20}}, {}), std::invalid_argument);
  BOOST_CHECK_THROW(calibrated_blocks(100, {{95, 10}}, {}), std::invalid_argument);
  BOOST_CHECK_THROW(calibrated_blocks(100, {}, {.density = 0.5}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(momentum_masking_clears_sparse_blocks_only) {
  const std::size_t n = 40000 + 100;
  auto residual = normal_values(n, 1.0f, 6);
  calibrated_blocks blocks(n, {{0, 40000}, {40000, 100}}, {});
  const auto message = blocks.encode(residual, 0);
  BOOST_REQUIRE(message);
  std::vector<float> momentum(n, 1.0f);
  clear_sent_elements(*message, momentum);
  const auto arrived = decoded(*message, n);
  for (std::size_t i = 0; i < 40000; ++i)
    BOOST_TEST(momentum[i] == (arrived[i] != 0.0f ? 0.0f : 1.0f));
  for (std::size_t i = 40000; i < n; ++i)
    BOOST_TEST(momentum[i] == 1.0f);  // dense: sent every step, its momentum is kept
}

BOOST_AUTO_TEST_CASE(the_threshold_encoder_adds_sends_and_keeps_the_rest) {
  // Through threshold_encoder, as the trainer uses it: the own replica gets the whole update.
  const std::size_t n = 30000;
  threshold_encoder_options options;
  options.calibration = calibrated_threshold_options{};
  options.blocks = {{0, 25000}, {25000, 5000}};
  threshold_encoder encoder(n, options);
  BOOST_TEST(encoder.calibrated());
  std::vector<float> replica(n, 0.0f), others(n, 0.0f);
  std::vector<float> sent_in(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    const auto update = normal_values(n, 1e-3f, 100 + step);
    for (std::size_t i = 0; i < n; ++i)
      sent_in[i] -= update[i];
    const auto message = encoder.encode(update, -1.0f, replica);
    BOOST_REQUIRE(message);
    auto ok = decode_add(message->enc, message->threshold, message->payload, others);
    BOOST_REQUIRE(ok);
  }
  const auto residual = encoder.residual();
  for (std::size_t i = 0; i < n; i += 97) {
    BOOST_TEST(replica[i] == sent_in[i], boost::test_tools::tolerance(1e-4f));
    BOOST_TEST(others[i] + residual[i] == sent_in[i], boost::test_tools::tolerance(1e-3f));
  }
  BOOST_TEST(encoder.figures().size() == 2u);
  BOOST_TEST(encoder.threshold() == encoder.figures()[0].threshold);
  BOOST_TEST(encoder.last_density() > 0.15);  // 1% of 25000 and all 5000 dense
  BOOST_TEST(encoder.last_density() < 0.2);
}
