#define BOOST_TEST_MODULE data_file_contents
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>

#include "fixtures.hpp"
#include "strom/compute/data/file_contents.hpp"

using namespace strom::compute;
using strom::test::scratch_dir;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::uint8_t> counting(std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint8_t>(i * 7 + i / 256);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(plain_file_is_returned_as_is) {
  scratch_dir dir;
  const auto content = counting(100000);
  auto read = read_file_contents(dir.write("plain.bin", content));
  BOOST_REQUIRE_MESSAGE(read.ok(), strom::test::error_text(read));
  BOOST_TEST(*read == content, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(empty_file_is_empty) {
  scratch_dir dir;
  auto read = read_file_contents(dir.write("empty.bin", {}));
  BOOST_REQUIRE_MESSAGE(read.ok(), strom::test::error_text(read));
  BOOST_TEST(read->empty());
}

BOOST_AUTO_TEST_CASE(gzip_file_is_decompressed) {
  scratch_dir dir;
  const auto content = counting(300000);
  auto read = read_file_contents(dir.write_gzip("data.gz", content));
  BOOST_REQUIRE_MESSAGE(read.ok(), strom::test::error_text(read));
  BOOST_TEST(*read == content, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(concatenated_gzip_members_are_joined) {
  scratch_dir dir;
  auto first = bytes_of(dir.write_gzip("a.gz", counting(1000)));
  const auto second = bytes_of(dir.write_gzip("b.gz", std::vector<std::uint8_t>(5000, 9)));
  first.insert(first.end(), second.begin(), second.end());
  auto read = read_file_contents(dir.write("ab.gz", first));
  BOOST_REQUIRE_MESSAGE(read.ok(), strom::test::error_text(read));
  auto expected = counting(1000);
  expected.insert(expected.end(), 5000, 9);
  BOOST_TEST(*read == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(garbage_after_the_gzip_stream_is_rejected) {
  scratch_dir dir;
  auto gz = bytes_of(dir.write_gzip("a.gz", counting(1000)));
  const auto end = gz.size();
  gz.insert(gz.end(), {1, 2, 3});
  auto read = read_file_contents(dir.write("tail.gz", gz));
  BOOST_REQUIRE(!read);
  const auto& message = read.err().message;
  BOOST_TEST(message.find("tail.gz") != std::string::npos, message);
  BOOST_TEST(message.find("compressed offset " + std::to_string(end)) != std::string::npos,
             message);
  BOOST_TEST(message.find("decompressed offset 1000") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(gzip_magic_alone_is_a_truncated_stream) {
  scratch_dir dir;
  auto read = read_file_contents(dir.write("magic.gz", {0x1f, 0x8b}));
  BOOST_REQUIRE(!read);
  BOOST_TEST(read.err().message.find("corrupt gzip stream") != std::string::npos,
             read.err().message);
}

BOOST_AUTO_TEST_CASE(lying_size_trailer_is_caught_by_the_length_check) {
  // The trailer's size only sizes the first buffer (within the deflate bound); a lie is then
  // caught by zlib's length check.
  scratch_dir dir;
  const auto content = counting(50000);
  auto gz = bytes_of(dir.write_gzip("a.gz", content));
  gz[gz.size() - 1] = 0x7f;  // claims about 2 GB
  auto read = read_file_contents(dir.write("lie.gz", gz));
  BOOST_REQUIRE(!read);
  BOOST_TEST(read.err().message.find("corrupt gzip stream") != std::string::npos,
             read.err().message);
}

BOOST_AUTO_TEST_CASE(directory_is_rejected) {
  scratch_dir dir;
  auto read = read_file_contents(dir.path().string());
  BOOST_REQUIRE(!read);
  BOOST_TEST(read.err().message.find("is a directory") != std::string::npos, read.err().message);
}
