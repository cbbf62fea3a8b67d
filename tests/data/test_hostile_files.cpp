#define BOOST_TEST_MODULE data_hostile_files
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "fixtures.hpp"
#include "strom/compute/data/csv_reader.hpp"
#include "strom/compute/data/file_contents.hpp"
#include "strom/compute/data/idx_reader.hpp"
#include "support/allocation_recorder.hpp"

// Hostile data files: gzip bombs, headers claiming huge sizes, oversized files. Each must be
// refused by a size check, naming the file and the sizes, without allocating what it claims
// (the replaced operator new records the largest single allocation while a read runs).

using namespace strom::compute;
using strom::test::idx_header;
using strom::test::scratch_dir;

namespace {

/// Zeros behind the bombs' headers: 64 MiB inflate from about 64 KiB.
constexpr std::size_t bomb_zeros = std::size_t{64} << 20;

/// The most a refused read may allocate at once: the compressed file (about 64 KiB) and
/// small buffers, far below the 64 MiB the bombs inflate to.
constexpr std::size_t allocation_bound = std::size_t{1} << 20;

/// Runs `read` and returns its error message and the largest allocation it made.
template <class Read>
std::pair<std::string, std::size_t> refused(Read read) {
  std::optional<decltype(read())> result;
  const auto record = strom::test::allocations_during([&] { result.emplace(read()); });
  BOOST_REQUIRE_MESSAGE(!result->ok(), "a hostile file was accepted");
  return {result->err().message, record.largest};
}

void check_error(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts)
    BOOST_TEST(message.find(part) != std::string::npos,
               "'" << message << "' should contain '" << part << "'");
}

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// An IDX header followed by bomb_zeros zeros, gzip-compressed into `name`.
std::string write_bomb(const scratch_dir& dir, const std::string& name,
                       std::initializer_list<std::uint32_t> dimensions) {
  auto content = idx_header(0x08, dimensions);
  content.resize(content.size() + bomb_zeros);
  return dir.write_gzip(name, content);
}

/// `gz` with the last member's trailer ISIZE replaced (RFC 1952: last 4 bytes, little-endian).
std::vector<std::uint8_t> with_isize(std::vector<std::uint8_t> gz, std::uint32_t isize) {
  for (int i = 0; i < 4; ++i)
    gz[gz.size() - 4 + i] = static_cast<std::uint8_t>(isize >> (8 * i));
  return gz;
}

/// A sparse file of `size` bytes: large on paper, nothing on disk.
std::string write_sparse(const scratch_dir& dir, const std::string& name, std::uint64_t size) {
  const auto path = dir.file(name);
  std::ofstream{path};
  std::filesystem::resize_file(path, size);
  return path;
}

/// 10 images of 28 x 28 ubyte and the 16-byte header: what the bombs' headers declare.
constexpr std::uint64_t small_declared = 16 + 10 * 28 * 28;

} // namespace

BOOST_AUTO_TEST_CASE(gzip_bomb_behind_a_small_idx_header_is_refused_by_its_trailer_without_inflating) {
  scratch_dir dir;
  const auto path = write_bomb(dir, "bomb.idx.gz", {10, 28, 28});
  const auto [message, largest] = refused([&] { return read_idx_images(path); });
  check_error(message, {path, "gzip trailer claims " + std::to_string(16 + bomb_zeros),
                        "more than the " + std::to_string(small_declared) +
                          " bytes the IDX header declares"});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(gzip_bomb_with_a_matching_trailer_stops_one_byte_past_the_declared_content) {
  scratch_dir dir;
  const auto bomb = bytes_of(write_bomb(dir, "bomb.idx.gz", {10, 28, 28}));
  const auto path = dir.write("lying.idx.gz", with_isize(bomb, small_declared));
  const auto [message, largest] = refused([&] { return read_idx_images(path); });
  check_error(message, {path, "continues past the " + std::to_string(small_declared) + " bytes",
                        "decompressed offset " + std::to_string(small_declared)});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(idx_header_claiming_huge_dimensions_is_refused_by_the_size_bound) {
  scratch_dir dir;
  // 60000 x 10000 x 10000 ubyte: 6 TB, far above max_data_file_bytes.
  const auto path = write_bomb(dir, "huge.idx.gz", {60000, 10000, 10000});
  const auto [message, largest] = refused([&] { return read_idx_images(path); });
  check_error(message, {path, "expected 6000000000000 bytes of image data",
                        "more than the limit of " + std::to_string(max_data_file_bytes)});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(idx_header_claiming_more_than_deflate_can_hold_is_refused) {
  scratch_dir dir;
  // 100 MB declared, within the bound, but a gzip file of a few hundred bytes cannot hold it.
  auto content = idx_header(0x08, {1000, 1000, 100});
  content.resize(content.size() + 4096);
  const auto path = dir.write_gzip("short.idx.gz", content);
  const auto [message, largest] = refused([&] { return read_idx_images(path); });
  check_error(message, {path, "expected 100000000 bytes of image data",
                        "gzip file can hold at deflate's best ratio of 1032:1"});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(plain_file_above_the_limit_is_refused_before_reading) {
  scratch_dir dir;
  const auto path = write_sparse(dir, "big.idx", max_data_file_bytes + 1);
  const auto [message, largest] = refused([&] { return read_idx_images(path); });
  check_error(message, {path, "file has " + std::to_string(max_data_file_bytes + 1) + " bytes",
                        "more than the limit of " + std::to_string(max_data_file_bytes)});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(gzip_content_past_the_callers_limit_is_refused_while_inflating) {
  scratch_dir dir;
  const std::uint64_t limit = std::uint64_t{1} << 20;
  const auto path = dir.write_gzip("zeros.gz", std::vector<std::uint8_t>(bomb_zeros));
  const auto [message, largest] = refused([&] { return read_file_contents(path, limit); });
  check_error(message, {path, "decompresses to more than " + std::to_string(limit) + " bytes"});
  // The output buffer grows up to the limit, never past it.
  BOOST_TEST(largest <= limit + allocation_bound);
}

BOOST_AUTO_TEST_CASE(csv_file_above_the_limit_is_refused_before_reading) {
  scratch_dir dir;
  const auto path = write_sparse(dir, "big.csv", max_csv_bytes + 1);
  const auto [message, largest] = refused([&] { return read_csv(path, {}); });
  check_error(message, {path, "more than the limit of " + std::to_string(max_csv_bytes)});
  BOOST_TEST(largest < allocation_bound);
}

BOOST_AUTO_TEST_CASE(csv_line_with_too_many_columns_is_refused_naming_the_line) {
  scratch_dir dir;
  std::string text = "0,1\n1";
  for (std::size_t i = 0; i < (std::size_t{1} << 20); ++i)
    text += ",0";
  text += '\n';
  const auto path = dir.write_text("wide.csv", text);
  const auto [message, largest] = refused([&] { return read_csv(path, {}); });
  check_error(message, {path, "line 2 has more than 1048576 columns"});
}
