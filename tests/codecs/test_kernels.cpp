#define BOOST_TEST_MODULE codecs_kernels
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/codecs/two_bit_codec.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;

namespace {

std::span<const std::byte> bytes_of(const std::vector<std::uint32_t>& words) {
  return std::as_bytes(std::span<const std::uint32_t>(words));
}

} // namespace

BOOST_AUTO_TEST_CASE(threshold_scan_adds_update_and_records_signed_one_based_indices) {
  std::vector<float> residual(40, 0.0f);
  std::vector<float> update(40, 0.1f);
  update[0] = 1.5f;
  update[17] = -1.0f;
  update[39] = 2.0f;
  std::vector<std::int32_t> indices(8);
  const auto hits = threshold_scan(residual, update, 1.0f, indices);
  BOOST_TEST(hits == 3u);
  BOOST_TEST((std::vector<std::int32_t>(indices.begin(), indices.begin() + 3)) ==
               (std::vector<std::int32_t>{1, -18, 40}), boost::test_tools::per_element());
  BOOST_TEST(residual[0] == 1.5f);  // the scan keeps full values until commit
  BOOST_TEST(residual[5] == 0.1f);
}

BOOST_AUTO_TEST_CASE(threshold_scan_counts_past_a_full_index_buffer) {
  std::vector<float> residual(64, 0.0f);
  const std::vector<float> update(64, -3.0f);
  std::vector<std::int32_t> indices(4);
  BOOST_TEST(threshold_scan(residual, update, 1.0f, indices) == 64u);
  BOOST_TEST(indices == (std::vector<std::int32_t>{-1, -2, -3, -4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(threshold_scan_adds_the_scaled_update_into_also_in_the_same_pass) {
  // 37 elements: two whole blocks of the vector loop and a scalar tail.
  std::vector<float> update(37);
  for (std::size_t i = 0; i < update.size(); ++i)
    update[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  std::vector<float> plain_residual(37, 0.125f), residual(37, 0.125f), also(37, 2.0f);
  std::vector<std::int32_t> plain_indices(37), indices(37);
  const auto plain_hits = threshold_scan(plain_residual, update, 0.6f, plain_indices, -1.0f);
  const auto hits = threshold_scan(residual, update, 0.6f, indices, -1.0f, also);
  BOOST_TEST(hits == plain_hits);
  BOOST_TEST(hits > 0u);
  BOOST_TEST(indices == plain_indices, boost::test_tools::per_element());
  BOOST_TEST(residual == plain_residual, boost::test_tools::per_element());
  for (std::size_t i = 0; i < also.size(); ++i) BOOST_TEST(also[i] == 2.0f - update[i]);
  std::vector<float> short_also(36);
  BOOST_CHECK_THROW(threshold_scan(residual, update, 0.6f, indices, -1.0f, short_also),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(clip_to_bound_takes_what_it_removes_out_of_also) {
  std::vector<float> residual(300, 0.5f);  // a whole block of the vector loop and a tail
  residual[3] = 4.0f;
  residual[299] = -6.0f;
  std::vector<float> also(300, 10.0f);
  BOOST_TEST(clip_to_bound(residual, 1.0f, also) == 3.0 - 5.0);
  BOOST_TEST(residual[3] == 1.0f);
  BOOST_TEST(residual[299] == -1.0f);
  BOOST_TEST(also[3] == 7.0f);
  BOOST_TEST(also[299] == 15.0f);
  BOOST_TEST(also[4] == 10.0f);
  std::vector<float> short_also(299);
  BOOST_CHECK_THROW(clip_to_bound(residual, 1.0f, short_also), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(clip_listed_to_bound_clips_only_the_listed_elements) {
  std::vector<float> residual{4.0f, 0.5f, -6.0f, 3.0f};
  std::vector<float> also(4, 10.0f);
  const std::vector<std::int32_t> listed{1, -3};  // element 3 (3.0) is not listed
  BOOST_TEST(clip_listed_to_bound(residual, listed, 1.0f, also) == 3.0 - 5.0);
  BOOST_TEST(residual == (std::vector<float>{1.0f, 0.5f, -1.0f, 3.0f}),
             boost::test_tools::per_element());
  BOOST_TEST(also == (std::vector<float>{7.0f, 10.0f, 15.0f, 10.0f}),
             boost::test_tools::per_element());
  std::vector<float> short_also(3);
  BOOST_CHECK_THROW(clip_listed_to_bound(residual, listed, 1.0f, short_also),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(threshold_commit_and_decode_round_trip) {
  std::vector<float> residual{0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> update{1.25f, -0.5f, -2.0f, 0.75f, 1.0f};
  std::vector<std::int32_t> indices(5);
  const auto hits = threshold_scan(residual, update, 0.75f, indices);
  indices.resize(hits);
  threshold_commit(residual, indices, 0.75f);
  std::vector<float> decoded(5, 0.0f);
  threshold_decode_add(std::as_bytes(std::span<const std::int32_t>(indices)), 0.75f, decoded);
  for (std::size_t i = 0; i < 5; ++i) BOOST_TEST(decoded[i] + residual[i] == update[i]);
  BOOST_TEST(residual[2] == -1.25f);  // one step per encoding, the rest waits
}

BOOST_AUTO_TEST_CASE(bitmap_codes_follow_dl4j) {
  // +t, -t, -t/2 (half state), and +0.6t, which DL4J leaves in the residual.
  std::vector<float> residual{1.5f, -1.25f, -0.625f, 0.625f, 0.25f};
  std::vector<std::uint32_t> words(bitmap_words(residual.size()));
  BOOST_TEST(bitmap_encode(residual, 1.0f, words) == 3u);
  BOOST_TEST(words[0] == ((1u << 0) | (1u << 1) | (1u << 17) | (1u << 18)));
  BOOST_TEST(residual == (std::vector<float>{0.5f, -0.25f, -0.125f, 0.625f, 0.25f}),
             boost::test_tools::per_element());
  std::vector<float> decoded(5, 0.0f);
  bitmap_decode_add(bytes_of(words), 1.0f, decoded);
  BOOST_TEST(decoded == (std::vector<float>{1.0f, -1.0f, -0.5f, 0.0f, 0.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bitmap_round_trip_on_random_residual) {
  rng random(11);
  std::vector<float> residual(1000);
  for (float& r : residual) r = random.uniform(-3.0f, 3.0f);
  const auto before = residual;
  std::vector<std::uint32_t> words(bitmap_words(residual.size()));
  bitmap_encode(residual, 0.5f, words);
  std::vector<float> decoded(residual.size(), 0.0f);
  BOOST_TEST(decode_add(encoding::bitmap, 0.5f, bytes_of(words), decoded).ok());
  for (std::size_t i = 0; i < residual.size(); ++i)
    BOOST_TEST_REQUIRE(decoded[i] + residual[i] == before[i], boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(two_bit_layout_matches_mxnet) {
  std::vector<float> residual(20, 0.0f);
  std::vector<float> update(20, 0.0f);
  update[0] = 1.0f;    // byte 0, bits 7..6: 11
  update[1] = -0.5f;   // byte 0, bits 5..4: 10
  update[5] = 0.75f;   // byte 1, bits 5..4: 11
  update[16] = -2.0f;  // word 1, byte 0, bits 7..6: 10
  std::vector<std::uint32_t> words(two_bit_words(20));
  BOOST_TEST(two_bit_encode(residual, update, 0.5f, words) == 4u);
  BOOST_TEST(words[0] == (0xe0u | (0x30u << 8)));
  BOOST_TEST(words[1] == 0x80u);
  BOOST_TEST(residual[0] == 0.5f);
  BOOST_TEST(residual[16] == -1.5f);
  std::vector<float> decoded(20, 0.0f);
  BOOST_TEST(decode_add(encoding::two_bit, 0.5f, bytes_of(words), decoded).ok());
  BOOST_TEST(decoded[0] == 0.5f);
  BOOST_TEST(decoded[1] == -0.5f);
  BOOST_TEST(decoded[5] == 0.5f);
  BOOST_TEST(decoded[16] == -0.5f);
  BOOST_TEST(decoded[2] == 0.0f);
}
