#define BOOST_TEST_MODULE codecs_kernels
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <stdexcept>
#include <vector>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/codecs/threshold_scan_avx512.hpp"
#include "strom/compute/codecs/two_bit_codec.hpp"
#include "strom/compute/random.hpp"

using namespace strom::compute;

namespace {

std::span<const std::byte> bytes_of(const std::vector<std::uint32_t>& words) {
  return std::as_bytes(std::span<const std::uint32_t>(words));
}

/// threshold_scan's signature, with `also` as a span (empty: none).
using scan_kernel = std::function<std::size_t(std::span<float>, std::span<const float>, float,
                                              std::span<std::int32_t>, float, std::span<float>)>;

/// The scan one element at a time, as its contract reads.
std::size_t reference_scan(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::int32_t> indices, float scale,
                           std::span<float> also) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < residual.size(); ++i) {
    const float change = scale * update[i];
    residual[i] += change;
    if (!also.empty()) also[i] += change;
    if (std::fabs(residual[i]) >= threshold) {
      const auto index = static_cast<std::int32_t>(i + 1);
      if (hits < indices.size()) indices[hits] = residual[i] > 0.0f ? index : -index;
      ++hits;
    }
  }
  return hits;
}

/// Runs `kernel` and the reference on random buffers: sizes around the kernels' block widths,
/// densities from none to most, index buffers from empty to roomy, scales whose products are
/// exact (so that a fused multiply-add could not hide), with and without `also`. Everything
/// the kernel writes must match bit for bit.
void check_against_reference(const scan_kernel& kernel, const std::string& name) {
  rng random(29);
  for (const std::size_t n : {1u, 4u, 15u, 16u, 17u, 33u, 64u, 1000u, 4099u})
    for (const float threshold : {0.05f, 0.5f, 0.95f, 2.0f})
      for (const std::size_t capacity : {std::size_t{0}, std::size_t{3}, std::size_t{20}, n})
        for (const float scale : {-1.0f, 0.5f})
          for (const bool with_also : {false, true}) {
            std::vector<float> update(n), residual(n), also(with_also ? n : 0);
            for (auto& x : update) x = random.uniform(-1.0f, 1.0f);
            for (auto& x : residual) x = random.uniform(-0.5f, 0.5f);
            for (auto& x : also) x = random.uniform(-3.0f, 3.0f);
            auto expected_residual = residual;
            auto expected_also = also;
            std::vector<std::int32_t> indices(capacity), expected_indices(capacity);
            const auto expected = reference_scan(expected_residual, update, threshold,
                                                 expected_indices, scale, expected_also);
            const auto hits = kernel(residual, update, threshold, indices, scale, also);
            const std::size_t listed = std::min(hits, capacity);
            BOOST_TEST_CONTEXT(name << " n=" << n << " threshold=" << threshold << " capacity="
                                    << capacity << " scale=" << scale << " also=" << with_also) {
              BOOST_TEST(hits == expected);
              BOOST_TEST(std::vector<std::int32_t>(indices.begin(), indices.begin() + listed) ==
                           std::vector<std::int32_t>(expected_indices.begin(),
                                                     expected_indices.begin() + listed),
                         boost::test_tools::per_element());
              BOOST_TEST(residual == expected_residual, boost::test_tools::per_element());
              BOOST_TEST(also == expected_also, boost::test_tools::per_element());
            }
          }
}

} // namespace

BOOST_AUTO_TEST_CASE(portable_threshold_scan_matches_the_element_by_element_scan) {
  check_against_reference(
    [](auto residual, auto update, float threshold, auto indices, float scale, auto also) {
      return threshold_scan_portable(residual, update, threshold, indices, scale, also);
    },
    "portable");
}

BOOST_AUTO_TEST_CASE(avx512_threshold_scan_matches_the_element_by_element_scan) {
  if (!cpu_has_avx512f()) {
    BOOST_TEST_MESSAGE("skipped: this CPU has no AVX-512F (threshold_scan runs the portable kernel)");
    return;
  }
  check_against_reference(
    [](auto residual, auto update, float threshold, auto indices, float scale, auto also) {
      return *threshold_scan_avx512(residual, update, threshold, indices, scale,
                                    also.empty() ? nullptr : also.data());
    },
    "avx512");
}

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
  const auto clipped = clip_to_bound(residual, 1.0f, also);
  BOOST_TEST(clipped.removed == 3.0 - 5.0);
  BOOST_TEST(clipped.magnitude == 3.0 + 5.0);
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
  const auto clipped = clip_listed_to_bound(residual, listed, 1.0f, also);
  BOOST_TEST(clipped.removed == 3.0 - 5.0);
  BOOST_TEST(clipped.magnitude == 3.0 + 5.0);
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
