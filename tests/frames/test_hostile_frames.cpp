#define BOOST_TEST_MODULE frames_hostile_frames
#include <boost/test/unit_test.hpp>

#include <lz4.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "frame_samples.hpp"
#include "strom/compute/frames/update_frame.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

constexpr std::size_t model_size = 64;
constexpr float sentinel = 3.25f;

/// Applies `f` to a model filled with a sentinel; checks that it is refused with a message
/// holding `needle` and that the model is untouched.
void expect_refused(const frame& f, const std::string& needle) {
  std::vector<float> model(model_size, sentinel);
  frame_workspace ws;
  const auto applied = apply_update_frame(f, model, ws);
  BOOST_TEST_REQUIRE(!applied.ok());
  BOOST_TEST_MESSAGE(applied.err().message);
  BOOST_TEST(applied.err().message.find(needle) != std::string::npos,
             "message '" << applied.err().message << "' lacks '" << needle << "'");
  BOOST_TEST(model == std::vector<float>(model_size, sentinel), boost::test_tools::per_element());
}

frame forged(const std::function<void(schema::UpdateFrame::Builder)>& fill) {
  const auto words = test::forge_frame_words(fill);
  auto f = frame::from_bytes(test::bytes_of(words));
  BOOST_TEST_REQUIRE(f.ok());
  return *f;
}

/// An honest dense fp32 payload of `elements` ones.
std::vector<std::byte> ones(std::size_t elements) {
  std::vector<float> values(elements, 1.0f);
  const auto bytes = std::as_bytes(std::span<const float>(values));
  return {bytes.begin(), bytes.end()};
}

} // namespace

BOOST_AUTO_TEST_CASE(honest_forged_frame_is_accepted) {
  // Guards the forging helper itself: without a lie the frame applies.
  const auto payload = ones(8);
  const frame f = forged([&](auto b) { test::fill_honest(b, encoding::dense_fp32, 0, 8, payload); });
  std::vector<float> model(model_size, 0.0f);
  frame_workspace ws;
  BOOST_TEST(apply_update_frame(f, model, ws).ok());
  BOOST_TEST(model[7] == 1.0f);
}

BOOST_AUTO_TEST_CASE(element_count_beyond_the_model_is_refused) {
  const auto payload = ones(model_size + 1);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, model_size + 1, payload);
  }), "does not fit a model of 64 elements");
}

BOOST_AUTO_TEST_CASE(offset_beyond_the_model_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setOffset(model_size - 4);
  }), "does not fit");
}

BOOST_AUTO_TEST_CASE(offset_plus_count_overflowing_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, std::numeric_limits<std::uint64_t>::max(),
                      payload);
    b.setOffset(16);
  }), "does not fit");
}

BOOST_AUTO_TEST_CASE(unknown_encoding_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setEncoding(static_cast<schema::Encoding>(6));
  }), "unknown encoding value 6");
}

BOOST_AUTO_TEST_CASE(unknown_compression_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setCompression(static_cast<schema::Compression>(2));
  }), "unknown compression value 2");
}

BOOST_AUTO_TEST_CASE(raw_size_disagreeing_with_uncompressed_payload_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setRawPayloadBytes(28);
  }), "rawPayloadBytes 28 but the uncompressed payload holds 32 bytes");
}

BOOST_AUTO_TEST_CASE(raw_size_over_the_cap_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setCompression(schema::Compression::LZ4);
    b.setRawPayloadBytes(std::numeric_limits<std::uint32_t>::max());
  }), "exceeds the cap");
}

BOOST_AUTO_TEST_CASE(raw_size_over_four_bytes_per_element_is_refused) {
  const auto payload = ones(8);
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 7, payload);
  }), "bytes per element");
}

/// An LZ4 block of `raw` zero bytes.
std::vector<char> lz4_zeros(std::size_t raw) {
  std::vector<char> zeros(raw, 0);
  std::vector<char> out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw))));
  const int size = LZ4_compress_default(zeros.data(), out.data(), static_cast<int>(raw),
                                        static_cast<int>(out.size()));
  BOOST_TEST_REQUIRE(size > 0);
  out.resize(static_cast<std::size_t>(size));
  return out;
}

void fill_lz4(schema::UpdateFrame::Builder b, const std::vector<char>& block,
              std::uint32_t claimed_raw, std::uint64_t elements) {
  b.setEncoding(schema::Encoding::DENSE_FP32);
  b.setElementCount(elements);
  b.setCompression(schema::Compression::LZ4);
  b.setRawPayloadBytes(claimed_raw);
  auto data = b.initPayload(static_cast<unsigned>(block.size()));
  std::memcpy(data.begin(), block.data(), block.size());
}

BOOST_AUTO_TEST_CASE(lz4_block_shorter_than_claimed_is_refused) {
  const auto block = lz4_zeros(64);
  expect_refused(forged([&](auto b) { fill_lz4(b, block, 128, 32); }),
                 "decompresses to 64 bytes, but rawPayloadBytes says 128");
}

BOOST_AUTO_TEST_CASE(lz4_block_longer_than_claimed_is_refused) {
  const auto block = lz4_zeros(128);
  expect_refused(forged([&](auto b) { fill_lz4(b, block, 64, 16); }), "corrupt");
}

BOOST_AUTO_TEST_CASE(lz4_bomb_claiming_impossible_expansion_is_refused) {
  // 16 bytes of LZ4 yield at most 16 * 255: a claim of 40000 is refused before allocating.
  // Read without a model, since apply would already bound the claim by the model's size.
  std::vector<char> block(16, 0);
  const frame f = forged([&](auto b) { fill_lz4(b, block, 40000, 10000); });
  frame_workspace ws;
  const auto view = read_update_frame(f, ws);
  BOOST_TEST_REQUIRE(!view.ok());
  BOOST_TEST(view.err().message.find("cannot expand to the claimed 40000 bytes") !=
             std::string::npos);
  BOOST_TEST(ws.payload.capacity() == 0u);
}

BOOST_AUTO_TEST_CASE(corrupt_lz4_block_is_refused) {
  std::vector<char> block(32, static_cast<char>(0xff));
  expect_refused(forged([&](auto b) { fill_lz4(b, block, 64, 16); }), "corrupt");
}

BOOST_AUTO_TEST_CASE(empty_lz4_block_is_refused) {
  expect_refused(forged([&](auto b) { fill_lz4(b, {}, 0, 16); }), "cannot expand");
}

BOOST_AUTO_TEST_CASE(payload_length_inconsistent_with_the_encoding_is_refused) {
  // A bitmap for 64 elements needs 4 words; this one has 3.
  const std::vector<std::byte> three_words(12, std::byte{0});
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::bitmap, 0.5f, 64, three_words);
  }), "bitmap payload for 64 elements: expected 16 bytes, found 12");
}

BOOST_AUTO_TEST_CASE(threshold_index_outside_the_slice_is_refused) {
  const std::int32_t indices[] = {1, -9};
  const auto payload = std::as_bytes(std::span<const std::int32_t>(indices));
  expect_refused(forged([&](auto b) {
    test::fill_honest(b, encoding::threshold, 0.5f, 8, payload);
  }), "index -9");
}

BOOST_AUTO_TEST_CASE(payload_pointer_out_of_the_segment_is_refused) {
  const auto payload = ones(8);
  auto words = test::forge_frame_words([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
  });
  // Word 1 of the frame is the root pointer, the struct's 8 data words follow, then its one
  // pointer: the payload's list pointer at word 10. Push its target far past the segment.
  std::uint64_t pointer;
  std::memcpy(&pointer, static_cast<const void*>(&words[10]), sizeof pointer);
  pointer += std::uint64_t{1} << 20;  // offset field (bits 2..31) grows by 2^18 words
  std::memcpy(static_cast<void*>(&words[10]), &pointer, sizeof pointer);
  auto f = frame::from_bytes(test::bytes_of(words));
  BOOST_TEST_REQUIRE(f.ok());
  expect_refused(*f, "malformed message");
}

BOOST_AUTO_TEST_CASE(root_pointer_of_the_wrong_kind_is_refused) {
  const auto payload = ones(8);
  auto words = test::forge_frame_words([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
  });
  std::uint64_t pointer;
  std::memcpy(&pointer, static_cast<const void*>(&words[1]), sizeof pointer);
  pointer |= 1;  // struct pointer becomes a list pointer
  std::memcpy(static_cast<void*>(&words[1]), &pointer, sizeof pointer);
  auto f = frame::from_bytes(test::bytes_of(words));
  BOOST_TEST_REQUIRE(f.ok());
  expect_refused(*f, "malformed message");
}

BOOST_AUTO_TEST_CASE(default_constructed_frame_is_refused) {
  expect_refused(frame{}, "empty");
}

BOOST_AUTO_TEST_CASE(a_frame_whose_checksum_disagrees_is_refused) {
  const auto payload = ones(8);
  const frame f = forged([&](auto b) {
    test::fill_honest(b, encoding::dense_fp32, 0, 8, payload);
    b.setChecksum(0x12345678u);
  });
  expect_refused(f, "the frame was damaged");
}

BOOST_AUTO_TEST_CASE(a_flipped_bit_never_changes_what_is_applied) {
  // What the checksum is for: a blocks frame whose flipped scale or fp16 exponent would
  // otherwise move the model by up to 1e38 an element. Every bit of the message flipped in
  // turn: the frame is refused with the model untouched, or (a bit of padding, which carries
  // nothing) applies exactly what the honest frame does.
  const auto values = test::noise_values(model_size, 5);
  const auto sample = test::encode_sample(encoding::blocks, values);
  auto honest = build_update_frame({}, sample.update);
  BOOST_TEST_REQUIRE(honest.ok());
  std::vector<float> expected(model_size, sentinel);
  frame_workspace ws;
  BOOST_TEST_REQUIRE(apply_update_frame(*honest, expected, ws).ok());
  const auto bytes = honest->bytes();
  std::size_t refused = 0;
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::byte> damaged(bytes.begin(), bytes.end());
      damaged[at] ^= static_cast<std::byte>(1 << bit);
      auto f = frame::from_bytes(damaged);
      if (!f) {
        ++refused;  // refused before it is even a frame (its length word)
        continue;
      }
      std::vector<float> model(model_size, sentinel);
      const bool applied = apply_update_frame(*f, model, ws).ok();
      refused += !applied;
      BOOST_TEST_CONTEXT("byte " << at << " bit " << bit) {
        BOOST_TEST(model == (applied ? expected : std::vector<float>(model_size, sentinel)),
                   boost::test_tools::per_element());
      }
    }
  // Most bits carry something: far more refusals than padding.
  BOOST_TEST(refused > bytes.size() * 8 / 2);
}
