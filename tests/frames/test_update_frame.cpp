#define BOOST_TEST_MODULE frames_update_frame
#include <boost/test/unit_test.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "frame_samples.hpp"
#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/frames/update_frame.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

constexpr std::size_t n = 4099;  // not a multiple of 16: exercises padding

/// What decode_add makes of the sample directly, to compare the frame path against.
std::vector<float> decoded_directly(const test::sample_update& s) {
  std::vector<float> model(s.update.elements, 0.0f);
  BOOST_TEST_REQUIRE(decode_add(s.update.enc, s.update.threshold, s.update.payload, model).ok());
  return model;
}

void check_round_trip(lz4_policy policy) {
  const auto values = test::sparse_values(n, 5);
  for (const encoding enc : test::all_encodings) {
    BOOST_TEST_CONTEXT("encoding " << static_cast<int>(enc)) {
      const auto sample = test::encode_sample(enc, values);
      auto f = build_update_frame({}, sample.update, {.lz4 = policy});
      BOOST_TEST_REQUIRE(f.ok());
      frame_workspace ws;
      auto view = read_update_frame(*f, ws);
      BOOST_TEST_REQUIRE(view.ok());
      BOOST_TEST((view->enc == enc));
      BOOST_TEST(view->elements == n);
      BOOST_TEST(view->threshold == sample.update.threshold);
      BOOST_TEST(view->payload.size() == sample.update.payload.size());
      BOOST_TEST(std::memcmp(view->payload.data(), sample.update.payload.data(),
                             view->payload.size()) == 0);
      std::vector<float> model(n, 0.0f);
      BOOST_TEST_REQUIRE(apply_update_frame(*f, model, ws).ok());
      const auto expected = decoded_directly(sample);
      BOOST_TEST(model == expected, boost::test_tools::per_element());
    }
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(every_encoding_round_trips_without_lz4) {
  check_round_trip(lz4_policy::never);
}

BOOST_AUTO_TEST_CASE(every_encoding_round_trips_with_lz4) {
  check_round_trip(lz4_policy::when_smaller);
}

BOOST_AUTO_TEST_CASE(header_fields_round_trip) {
  const auto sample = test::encode_sample(encoding::threshold, test::sparse_values(100, 3));
  const frame_header header{.origin_node = 0xfedcba9876543210ull, .worker = 17,
                            .sequence = 123456789012ull, .iteration = 42, .epoch = 3,
                            .offset = 1000};
  auto f = build_update_frame(header, sample.update);
  BOOST_TEST_REQUIRE(f.ok());
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  BOOST_TEST_REQUIRE(view.ok());
  BOOST_TEST(view->header.origin_node == header.origin_node);
  BOOST_TEST(view->header.worker == header.worker);
  BOOST_TEST(view->header.sequence == header.sequence);
  BOOST_TEST(view->header.iteration == header.iteration);
  BOOST_TEST(view->header.epoch == header.epoch);
  BOOST_TEST(view->header.offset == header.offset);
  BOOST_TEST(view->threshold == 0.5f);
}

BOOST_AUTO_TEST_CASE(lz4_is_used_when_it_saves_an_eighth) {
  // A dense update that is mostly zeros compresses far better than 7/8.
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(n, 50));
  auto f = build_update_frame({}, sample.update, {.lz4 = lz4_policy::when_smaller});
  BOOST_TEST_REQUIRE(f.ok());
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  BOOST_TEST_REQUIRE(view.ok());
  BOOST_TEST((view->compression == frame_compression::lz4));
  BOOST_TEST(view->stored_payload_bytes * 8 <= sample.update.payload.size() * 7);
  // The truncated blob gave its tail back: the frame is about as small as the compressed data.
  BOOST_TEST(f->size() < view->stored_payload_bytes + 128);
}

BOOST_AUTO_TEST_CASE(lz4_is_not_used_when_it_does_not_pay_off) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::noise_values(n, 11));
  auto f = build_update_frame({}, sample.update, {.lz4 = lz4_policy::when_smaller});
  BOOST_TEST_REQUIRE(f.ok());
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  BOOST_TEST_REQUIRE(view.ok());
  BOOST_TEST((view->compression == frame_compression::none));
  BOOST_TEST(view->stored_payload_bytes == sample.update.payload.size());
  // Uncompressed payloads are read in place, not copied into the workspace.
  BOOST_TEST(static_cast<const void*>(view->payload.data()) >=
             static_cast<const void*>(f->bytes().data()));
  BOOST_TEST(static_cast<const void*>(view->payload.data()) <
             static_cast<const void*>(f->bytes().data() + f->size()));
}

BOOST_AUTO_TEST_CASE(lz4_never_policy_stores_compressible_payload_as_is) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(n, 50));
  auto f = build_update_frame({}, sample.update, {.lz4 = lz4_policy::never});
  BOOST_TEST_REQUIRE(f.ok());
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  BOOST_TEST_REQUIRE(view.ok());
  BOOST_TEST((view->compression == frame_compression::none));
}

BOOST_AUTO_TEST_CASE(frame_is_sized_exactly_by_its_contents) {
  // Root pointer, 8 data words and 1 pointer of the struct, the payload, the stream header.
  const auto sample = test::encode_sample(encoding::dense_fp32, test::noise_values(100, 5));
  auto f = build_update_frame({}, sample.update);
  BOOST_TEST_REQUIRE(f.ok());
  BOOST_TEST(f->size() == 8u + (1u + 8u + 1u) * 8u + 400u);
}

BOOST_AUTO_TEST_CASE(frame_applies_to_its_slice_only) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(10, 1));
  auto f = build_update_frame({.offset = 5}, sample.update);
  BOOST_TEST_REQUIRE(f.ok());
  std::vector<float> model(20, 0.0f);
  frame_workspace ws;
  BOOST_TEST_REQUIRE(apply_update_frame(*f, model, ws).ok());
  for (std::size_t i = 0; i < 20; ++i) {
    const float expected = i >= 5 && i < 15 ? ((i - 5) % 2 == 0 ? 1.0f : -1.0f) : 0.0f;
    BOOST_TEST(model[i] == expected, "element " << i);
  }
}

BOOST_AUTO_TEST_CASE(read_frame_applies_to_its_slice_and_refuses_a_model_too_small) {
  const auto sample = test::encode_sample(encoding::threshold, test::sparse_values(10, 1));
  auto f = build_update_frame({.offset = 5}, sample.update);
  BOOST_TEST_REQUIRE(f.ok());
  frame_workspace ws;
  auto view = read_update_frame(*f, ws);
  BOOST_TEST_REQUIRE(view.ok());
  std::vector<float> from_view(20, 0.0f);
  BOOST_TEST_REQUIRE(apply_update_frame(*view, from_view).ok());
  std::vector<float> from_frame(20, 0.0f);
  frame_workspace other;
  BOOST_TEST_REQUIRE(apply_update_frame(*f, from_frame, other).ok());
  BOOST_TEST(from_view == from_frame, boost::test_tools::per_element());
  BOOST_TEST(std::count(from_view.begin(), from_view.end(), 0.0f) < 20);
  BOOST_TEST(std::count(from_view.begin(), from_view.begin() + 5, 0.0f) == 5);
  std::vector<float> small(14, 1.0f);
  const auto refused = apply_update_frame(*view, small);
  BOOST_TEST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().message.find("does not fit a model of 14") != std::string::npos);
  BOOST_TEST(small == std::vector<float>(14, 1.0f), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(empty_update_round_trips) {
  const encoded_update empty{encoding::threshold, 0.5f, 100, 0, {}};
  auto f = build_update_frame({}, empty, {.lz4 = lz4_policy::when_smaller});
  BOOST_TEST_REQUIRE(f.ok());
  std::vector<float> model(100, 1.0f);
  frame_workspace ws;
  BOOST_TEST(apply_update_frame(*f, model, ws).ok());
  BOOST_TEST(model == std::vector<float>(100, 1.0f), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(builder_refuses_payload_over_the_data_limit) {
  // Reserved, never touched: the builder must refuse on the length alone.
  const std::size_t length = max_payload_bytes + 1;
  void* reserved = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                          -1, 0);
  BOOST_TEST_REQUIRE(reserved != MAP_FAILED);
  const encoded_update huge{encoding::dense_fp32, 0.0f, length, 0,
                            {static_cast<const std::byte*>(reserved), length}};
  auto f = build_update_frame({}, huge);
  ::munmap(reserved, length);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.err().message.find("split the slice") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(builder_refuses_more_than_four_bytes_per_element) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(10, 1));
  encoded_update lying = sample.update;
  lying.elements = 9;
  auto f = build_update_frame({}, lying);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.err().message.find("bytes per element") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(builder_refuses_a_slice_whose_end_overflows) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(10, 1));
  auto f = build_update_frame({.offset = std::numeric_limits<std::uint64_t>::max() - 3},
                              sample.update);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.err().message.find("overflows") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(builder_refuses_an_unknown_encoding) {
  const auto sample = test::encode_sample(encoding::dense_fp32, test::sparse_values(10, 1));
  encoded_update bad = sample.update;
  bad.enc = static_cast<encoding>(9);
  auto f = build_update_frame({}, bad);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.err().message.find("unknown encoding value 9") != std::string::npos);
}
