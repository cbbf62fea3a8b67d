#define BOOST_TEST_MODULE frames_frame
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <memory>
#include <vector>

#include "frame_samples.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/frames/frame_file.hpp"
#include "strom/compute/frames/update_frame.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

frame sample_frame() {
  const auto values = test::sparse_values(1000, 7);
  const auto sample = test::encode_sample(encoding::bitmap, values);
  auto built = build_update_frame({.origin_node = 1, .sequence = 2}, sample.update);
  BOOST_TEST_REQUIRE(built.ok());
  return *built;
}

std::vector<std::byte> copy_bytes(const frame& f) {
  return {f.bytes().begin(), f.bytes().end()};
}

bool refused_with(const result<frame>& r, const std::string& needle) {
  if (r.ok()) {
    BOOST_TEST_MESSAGE("unexpectedly accepted");
    return false;
  }
  BOOST_TEST_MESSAGE(r.err().message);
  return r.err().message.find(needle) != std::string::npos;
}

std::filesystem::path temp_path(const char* name) {
  return std::filesystem::temp_directory_path() /
         (std::string("strom_test_frame_") + std::to_string(::getpid()) + "_" + name);
}

} // namespace

BOOST_AUTO_TEST_CASE(aligned_input_with_owner_is_read_in_place) {
  const frame original = sample_frame();
  auto words = std::make_shared<std::vector<std::byte>>(copy_bytes(original));
  // std::vector<std::byte> from operator new is at least 16-byte aligned.
  auto f = frame::from_bytes(*words, words);
  BOOST_TEST_REQUIRE(f.ok());
  BOOST_TEST(static_cast<const void*>(f->bytes().data()) ==
             static_cast<const void*>(words->data()));
}

BOOST_AUTO_TEST_CASE(unaligned_input_is_copied_into_aligned_storage) {
  const frame original = sample_frame();
  auto storage = std::make_shared<std::vector<std::byte>>(original.size() + 1);
  std::memcpy(storage->data() + 1, original.bytes().data(), original.size());
  const std::span<const std::byte> unaligned{storage->data() + 1, original.size()};
  auto f = frame::from_bytes(unaligned, storage);
  BOOST_TEST_REQUIRE(f.ok());
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(f->bytes().data()) % 8 == 0u);
  BOOST_TEST(std::memcmp(f->bytes().data(), original.bytes().data(), original.size()) == 0);
  frame_workspace ws;
  BOOST_TEST(read_update_frame(*f, ws).ok());
}

BOOST_AUTO_TEST_CASE(input_without_owner_is_copied) {
  const frame original = sample_frame();
  auto f = frame::from_bytes(original.bytes());
  BOOST_TEST_REQUIRE(f.ok());
  BOOST_TEST(static_cast<const void*>(f->bytes().data()) !=
             static_cast<const void*>(original.bytes().data()));
  BOOST_TEST(f->size() == original.size());
}

BOOST_AUTO_TEST_CASE(copies_of_a_frame_share_one_buffer) {
  const frame original = sample_frame();
  const frame copy = original;  // NOLINT: the copy is the point
  BOOST_TEST(static_cast<const void*>(copy.bytes().data()) ==
             static_cast<const void*>(original.bytes().data()));
}

BOOST_AUTO_TEST_CASE(length_not_a_multiple_of_eight_is_refused) {
  auto bytes = copy_bytes(sample_frame());
  BOOST_TEST(refused_with(frame::from_bytes({bytes.data(), bytes.size() - 3}),
                          "not a multiple of 8"));
}

BOOST_AUTO_TEST_CASE(length_shorter_than_header_and_root_is_refused) {
  auto bytes = copy_bytes(sample_frame());
  BOOST_TEST(refused_with(frame::from_bytes({bytes.data(), 8}), "shorter than"));
  BOOST_TEST(refused_with(frame::from_bytes({}), "shorter than"));
}

BOOST_AUTO_TEST_CASE(length_over_the_cap_is_refused_before_allocation) {
  static_assert(max_frame_bytes % 8 == 0);
  const auto checked = frame::check_size(max_frame_bytes + 8);
  BOOST_TEST_REQUIRE(!checked.ok());
  BOOST_TEST(checked.err().message.find("exceeds the cap") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(truncated_frame_is_refused) {
  auto bytes = copy_bytes(sample_frame());
  BOOST_TEST(refused_with(frame::from_bytes({bytes.data(), bytes.size() - 8}),
                          "words follow it"));
}

BOOST_AUTO_TEST_CASE(trailing_bytes_are_refused) {
  auto bytes = copy_bytes(sample_frame());
  bytes.resize(bytes.size() + 8);
  BOOST_TEST(refused_with(frame::from_bytes(bytes), "words follow it"));
}

BOOST_AUTO_TEST_CASE(more_than_one_segment_is_refused) {
  auto bytes = copy_bytes(sample_frame());
  const std::uint32_t two_segments = 1;  // the header stores the count minus one
  std::memcpy(bytes.data(), &two_segments, sizeof two_segments);
  BOOST_TEST(refused_with(frame::from_bytes(bytes), "declares 2 segments"));
}

BOOST_AUTO_TEST_CASE(built_frame_is_one_segment_filling_the_frame) {
  const frame f = sample_frame();
  std::uint32_t header[2];
  std::memcpy(header, f.bytes().data(), sizeof header);
  BOOST_TEST(header[0] == 0u);
  BOOST_TEST(header[1] * 8u + 8u == f.size());
  BOOST_TEST(f.segment().size() == header[1]);
}

BOOST_AUTO_TEST_CASE(frame_file_round_trip_keeps_every_byte) {
  const frame f = sample_frame();
  const auto path = temp_path("round_trip");
  BOOST_TEST_REQUIRE(write_frame_file(path, f).ok());
  auto back = read_frame_file(path);
  std::filesystem::remove(path);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST(back->size() == f.size());
  BOOST_TEST(std::memcmp(back->bytes().data(), f.bytes().data(), f.size()) == 0);
}

BOOST_AUTO_TEST_CASE(missing_frame_file_is_refused_naming_it) {
  const auto path = temp_path("missing");
  auto back = read_frame_file(path);
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(back.err().message.find(path.string()) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(oversized_frame_file_is_refused_without_reading_it) {
  const auto path = temp_path("oversized");
  std::FILE* file = std::fopen(path.c_str(), "wb");
  BOOST_TEST_REQUIRE(file != nullptr);
  std::fclose(file);
  std::filesystem::resize_file(path, max_frame_bytes + 1024);  // sparse: costs no disk
  auto back = read_frame_file(path);
  std::filesystem::remove(path);
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(back.err().message.find("exceeds the cap") != std::string::npos);
}
