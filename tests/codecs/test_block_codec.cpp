#define BOOST_TEST_MODULE codecs_block_codec
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/codecs/block_codec.hpp"
#include "strom/compute/codecs/decode.hpp"

using namespace strom::compute;

namespace {

/// A blocks payload of `headers` and the words of their payloads, in order.
std::vector<std::uint32_t> payload(const std::vector<block_header>& headers,
                                   const std::vector<std::uint32_t>& body) {
  std::vector<std::uint32_t> words(1 + block_header_words * headers.size());
  words[0] = static_cast<std::uint32_t>(headers.size());
  for (std::size_t b = 0; b < headers.size(); ++b)
    put_block_header(words.data() + 1 + b * block_header_words, headers[b]);
  words.insert(words.end(), body.begin(), body.end());
  return words;
}

std::string refusal(const std::vector<std::uint32_t>& words, std::size_t elements) {
  std::vector<float> target(elements, 1.0f);
  auto ok = decode_add(encoding::blocks, 0.0f, std::as_bytes(std::span(words)), target);
  BOOST_REQUIRE(!ok);
  for (float v : target)
    BOOST_TEST(v == 1.0f);  // nothing touched
  return ok.err().message;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(blocks_decode_each_into_their_own_slice) {
  // Elements 2 and 4 (1-based within the block at 3) of a threshold block, then a dense fp32
  // block of two.
  const auto words = payload({{encoding::threshold, 3, 4, 0.5f, 2},
                              {encoding::dense_fp32, 8, 2, 0.0f, 2}},
                             {2u, static_cast<std::uint32_t>(-4), std::bit_cast<std::uint32_t>(1.5f),
                              std::bit_cast<std::uint32_t>(-2.0f)});
  std::vector<float> target(10, 0.0f);
  auto ok = decode_add(encoding::blocks, 0.0f, std::as_bytes(std::span(words)), target);
  BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.err().message));
  BOOST_TEST(target == (std::vector<float>{0, 0, 0, 0, 0.5f, 0, -0.5f, 0, 1.5f, -2.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_empty_blocks_payload_is_valid) {
  const std::vector<std::uint32_t> words{0u};
  BOOST_TEST(static_cast<bool>(validate(encoding::blocks, 0.0f, std::as_bytes(std::span(words)), 5)));
}

BOOST_AUTO_TEST_CASE(hostile_block_payloads_are_refused_naming_the_block) {
  BOOST_TEST(mentions(refusal({}, 4), "length 0"));
  BOOST_TEST(mentions(refusal({7u}, 4), "7 blocks do not fit"));
  // Overlapping, out of the buffer, nested, too long or short of words.
  BOOST_TEST(mentions(refusal(payload({{encoding::dense_fp32, 0, 2, 0.0f, 2},
                                       {encoding::dense_fp32, 1, 1, 0.0f, 1}},
                                      {0u, 0u, 0u}), 4), "block 1 covers [1, 2)"));
  BOOST_TEST(mentions(refusal(payload({{encoding::dense_fp32, 3, 2, 0.0f, 2}}, {0u, 0u}), 4),
                      "block 0 covers [3, 5)"));
  BOOST_TEST(mentions(refusal(payload({{encoding::blocks, 0, 2, 0.0f, 1}}, {0u}), 4),
                      "encoding value 5"));
  BOOST_TEST(mentions(refusal(payload({{encoding::dense_fp32, 0, 2, 0.0f, 9}}, {0u, 0u}), 4),
                      "claims 9 words"));
  BOOST_TEST(mentions(refusal(payload({{encoding::dense_fp32, 0, 1, 0.0f, 1}}, {0u, 0u}), 4),
                      "1 words after the last block"));
  // A block's own payload is checked as its encoding is: an index past the block's end.
  BOOST_TEST(mentions(refusal(payload({{encoding::threshold, 0, 2, 0.5f, 1}}, {3u}), 4),
                      "block 0 at element 0: threshold payload: index 3"));
  BOOST_TEST(mentions(refusal(payload({{encoding::threshold, 0, 2, -1.0f, 1}}, {1u}), 4),
                      "threshold must be finite"));
}
