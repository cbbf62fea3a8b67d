#define BOOST_TEST_MODULE codecs_decode
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "strom/compute/codecs/decode.hpp"

using namespace strom::compute;

namespace {

std::vector<std::byte> words_to_bytes(const std::vector<std::uint32_t>& words) {
  std::vector<std::byte> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

std::vector<std::byte> indices_to_bytes(const std::vector<std::int32_t>& indices) {
  std::vector<std::byte> bytes(indices.size() * 4);
  std::memcpy(bytes.data(), indices.data(), bytes.size());
  return bytes;
}

std::vector<std::byte> floats_to_bytes(const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

const std::vector<float> untouched(20, 7.0f);

// Decodes into a copy of `untouched` and checks the call was refused with `needle` in the
// message and the target left as it was.
void expect_refused(encoding enc, float threshold, const std::vector<std::byte>& payload,
                    const std::string& needle, std::size_t n = 20) {
  std::vector<float> target(untouched.begin(), untouched.begin() + static_cast<long>(n));
  auto res = decode_add(enc, threshold, payload, target);
  BOOST_REQUIRE(!res.ok());
  BOOST_TEST_INFO("message: " << res.err().message);
  BOOST_TEST(res.err().message.find(needle) != std::string::npos);
  BOOST_TEST(target == std::vector<float>(untouched.begin(), untouched.begin() + static_cast<long>(n)),
             boost::test_tools::per_element());
}

} // namespace

BOOST_AUTO_TEST_CASE(threshold_payload_adds_signed_steps) {
  std::vector<float> target(20, 0.0f);
  auto res = decode_add(encoding::threshold, 0.25f, indices_to_bytes({1, -3, 20, 1}), target);
  BOOST_REQUIRE(res.ok());
  BOOST_TEST(target[0] == 0.5f);
  BOOST_TEST(target[2] == -0.25f);
  BOOST_TEST(target[19] == 0.25f);
  BOOST_TEST(target[1] == 0.0f);
}

BOOST_AUTO_TEST_CASE(empty_threshold_payload_changes_nothing) {
  std::vector<float> target(untouched);
  BOOST_TEST(decode_add(encoding::threshold, 1.0f, {}, target).ok());
  BOOST_TEST(target == untouched, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(threshold_payload_of_odd_length_is_refused) {
  auto payload = indices_to_bytes({1, 2});
  payload.pop_back();
  expect_refused(encoding::threshold, 1.0f, payload, "multiple of 4");
}

BOOST_AUTO_TEST_CASE(zero_index_is_refused_even_after_valid_ones) {
  expect_refused(encoding::threshold, 1.0f, indices_to_bytes({1, 2, 0}), "index 0");
}

BOOST_AUTO_TEST_CASE(out_of_range_indices_are_refused) {
  expect_refused(encoding::threshold, 1.0f, indices_to_bytes({21}), "index 21");
  expect_refused(encoding::threshold, 1.0f, indices_to_bytes({-21}), "index -21");
  expect_refused(encoding::threshold, 1.0f,
                 indices_to_bytes({std::numeric_limits<std::int32_t>::min()}), "outside [1, 20]");
}

BOOST_AUTO_TEST_CASE(bad_thresholds_are_refused) {
  const auto payload = indices_to_bytes({1});
  expect_refused(encoding::threshold, std::nanf(""), payload, "threshold");
  expect_refused(encoding::threshold, std::numeric_limits<float>::infinity(), payload, "threshold");
  expect_refused(encoding::threshold, 0.0f, payload, "threshold");
  expect_refused(encoding::threshold, -1.0f, payload, "threshold");
  expect_refused(encoding::bitmap, std::nanf(""), words_to_bytes({0, 0}), "threshold");
  expect_refused(encoding::two_bit, 0.0f, words_to_bytes({0, 0}), "threshold");
}

BOOST_AUTO_TEST_CASE(unknown_encoding_value_is_refused) {
  expect_refused(static_cast<encoding>(9), 1.0f, indices_to_bytes({1}), "unknown encoding value 9");
}

BOOST_AUTO_TEST_CASE(bitmap_payload_must_be_ceil_n_over_16_words) {
  expect_refused(encoding::bitmap, 1.0f, words_to_bytes({0}), "expected 8 bytes, found 4");
  expect_refused(encoding::bitmap, 1.0f, words_to_bytes({0, 0, 0}), "expected 8 bytes, found 12");
}

BOOST_AUTO_TEST_CASE(bitmap_padding_bits_are_refused) {
  // 20 elements: the second word covers elements 16..19, bits 0..3 and 16..19.
  expect_refused(encoding::bitmap, 1.0f, words_to_bytes({0, 1u << 4}), "padding");
  expect_refused(encoding::bitmap, 1.0f, words_to_bytes({0, 1u << 31}), "padding");
  std::vector<float> target(20, 0.0f);
  BOOST_TEST(decode_add(encoding::bitmap, 1.0f, words_to_bytes({0, (1u << 3) | (1u << 19)}), target).ok());
  BOOST_TEST(target[19] == -1.0f);
}

BOOST_AUTO_TEST_CASE(two_bit_payload_with_undefined_code_is_refused) {
  expect_refused(encoding::two_bit, 0.5f, words_to_bytes({0x40u, 0}), "code 01");
}

BOOST_AUTO_TEST_CASE(two_bit_payload_length_and_padding_are_checked) {
  expect_refused(encoding::two_bit, 0.5f, words_to_bytes({0}), "expected 8 bytes");
  // 20 elements: the last word uses elements 16..19, i.e. its byte 0 only.
  expect_refused(encoding::two_bit, 0.5f, words_to_bytes({0, 0xc000u}), "padding");
}

BOOST_AUTO_TEST_CASE(dense_fp32_payload_adds_values) {
  std::vector<float> target(3, 1.0f);
  BOOST_TEST(decode_add(encoding::dense_fp32, 0.0f, floats_to_bytes({0.5f, -1.0f, 2.0f}), target).ok());
  BOOST_TEST(target == (std::vector<float>{1.5f, 0.0f, 3.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dense_fp32_length_and_non_finite_values_are_refused) {
  expect_refused(encoding::dense_fp32, 0.0f, floats_to_bytes(std::vector<float>(19, 1.0f)),
                 "expected 80 bytes, found 76");
  std::vector<float> values(20, 1.0f);
  values[17] = std::nanf("");
  expect_refused(encoding::dense_fp32, 0.0f, floats_to_bytes(values), "element 17");
  values[17] = -std::numeric_limits<float>::infinity();
  expect_refused(encoding::dense_fp32, 0.0f, floats_to_bytes(values), "element 17");
}

BOOST_AUTO_TEST_CASE(dense_fp16_length_non_finite_and_padding_are_refused) {
  expect_refused(encoding::dense_fp16, 0.0f, words_to_bytes(std::vector<std::uint32_t>(9, 0)),
                 "expected 40 bytes, found 36");
  std::vector<std::uint32_t> words(10, 0x3c003c00u);  // pairs of 1.0
  words[4] = 0x7c003c00u;                             // element 9 is +inf
  expect_refused(encoding::dense_fp16, 0.0f, words_to_bytes(words), "element 9");
  std::vector<std::uint32_t> odd(2, 0x3c003c00u);     // 3 elements: element 3 is padding
  expect_refused(encoding::dense_fp16, 0.0f, words_to_bytes(odd), "padding", 3);
}
