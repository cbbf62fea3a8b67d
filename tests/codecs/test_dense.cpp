#define BOOST_TEST_MODULE codecs_dense
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;

BOOST_AUTO_TEST_CASE(float_to_half_known_values) {
  BOOST_TEST(float_to_half(1.0f) == 0x3c00u);
  BOOST_TEST(float_to_half(-2.0f) == 0xc000u);
  BOOST_TEST(float_to_half(0.0f) == 0x0000u);
  BOOST_TEST(float_to_half(-0.0f) == 0x8000u);
  BOOST_TEST(float_to_half(65504.0f) == 0x7bffu);
  BOOST_TEST(float_to_half(std::ldexp(1.0f, -14)) == 0x0400u);  // smallest normal
  BOOST_TEST(float_to_half(std::ldexp(1.0f, -24)) == 0x0001u);  // smallest subnormal
}

BOOST_AUTO_TEST_CASE(float_to_half_rounds_ties_to_even) {
  BOOST_TEST(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00u);      // tie, down to even
  BOOST_TEST(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02u);  // tie, up to even
  BOOST_TEST(float_to_half(1.0f + std::ldexp(1.2f, -11)) == 0x3c01u);      // above the tie
  BOOST_TEST(float_to_half(std::ldexp(1.0f, -25)) == 0x0000u);             // subnormal tie to 0
  BOOST_TEST(float_to_half(std::ldexp(3.0f, -26)) == 0x0001u);             // subnormal, up
  BOOST_TEST(float_to_half(std::ldexp(3.0f, -25)) == 0x0002u);             // 1.5 units: to even
}

BOOST_AUTO_TEST_CASE(float_to_half_saturates_finite_overflow_and_keeps_nan_and_inf) {
  BOOST_TEST(float_to_half(65519.0f) == 0x7bffu);
  BOOST_TEST(float_to_half(1e9f) == 0x7bffu);
  BOOST_TEST(float_to_half(-1e9f) == 0xfbffu);
  BOOST_TEST(float_to_half(INFINITY) == 0x7c00u);
  BOOST_TEST(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

BOOST_AUTO_TEST_CASE(every_half_round_trips_through_float) {
  for (std::uint32_t h = 0; h <= 0xffffu; ++h) {
    const float value = half_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(value)) continue;
    BOOST_TEST_REQUIRE(float_to_half(value) == h);
  }
}

#ifdef __FLT16_MAX__
BOOST_AUTO_TEST_CASE(float_to_half_matches_the_compiler_conversion) {
  rng random(20240611);
  for (int k = 0; k < 200000; ++k) {
    const float value = std::ldexp(random.uniform(-1.0f, 1.0f), static_cast<int>(random.next() % 40) - 28);
    const _Float16 reference = static_cast<_Float16>(value);
    std::uint16_t bits;
    std::memcpy(&bits, &reference, sizeof bits);
    BOOST_TEST_REQUIRE(float_to_half(value) == bits);
  }
}
#endif

BOOST_AUTO_TEST_CASE(dense_fp32_update_views_the_values) {
  const std::vector<float> values{1.0f, -2.5f, 3.0f};
  const auto update = dense_fp32_update(values);
  BOOST_TEST(static_cast<int>(update.enc) == static_cast<int>(encoding::dense_fp32));
  BOOST_TEST(update.elements == 3u);
  BOOST_TEST(static_cast<const void*>(update.payload.data()) == static_cast<const void*>(values.data()));
  std::vector<float> target(3, 1.0f);
  BOOST_TEST(decode_add(update.enc, update.threshold, update.payload, target).ok());
  BOOST_TEST(target == (std::vector<float>{2.0f, -1.5f, 4.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fp16_encoder_round_trips_representable_values) {
  const std::vector<float> values{1.0f, -0.5f, 0.25f, 1024.0f, -3.0f};  // odd count: padding
  fp16_encoder encoder(values.size());
  const auto update = encoder.encode(values);
  BOOST_TEST(update.payload.size() == 12u);
  std::vector<float> target(values.size(), 0.0f);
  BOOST_TEST(decode_add(update.enc, update.threshold, update.payload, target).ok());
  BOOST_TEST(target == values, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fp16_encoder_is_within_half_an_ulp) {
  rng random(7);
  std::vector<float> values(1001);
  for (float& v : values) v = random.uniform(-4.0f, 4.0f);
  fp16_encoder encoder(values.size());
  const auto update = encoder.encode(values);
  std::vector<float> target(values.size(), 0.0f);
  BOOST_TEST(decode_add(update.enc, update.threshold, update.payload, target).ok());
  for (std::size_t i = 0; i < values.size(); ++i)
    BOOST_TEST_REQUIRE(std::fabs(target[i] - values[i]) <= std::ldexp(1.0f, -11) * 4.0f);
}
