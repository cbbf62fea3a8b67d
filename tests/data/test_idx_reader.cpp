#define BOOST_TEST_MODULE data_idx_reader
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>

#include "fixtures.hpp"
#include "strom/compute/data/idx_reader.hpp"

using namespace strom::compute;
using strom::test::idx_header;
using strom::test::idx_ubyte;
using strom::test::put_be;
using strom::test::scratch_dir;

namespace {

/// Three 2x3 ubyte images holding 0..17, and their labels 2, 0, 1.
const std::vector<std::uint8_t> image_bytes = idx_ubyte(
  {3, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17});
const std::vector<std::uint8_t> label_bytes = idx_ubyte({3}, {2, 0, 1});

void check_error(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts)
    BOOST_TEST(message.find(part) != std::string::npos,
               "'" << message << "' should contain '" << part << "'");
}

std::string images_error(const std::vector<std::uint8_t>& bytes) {
  scratch_dir dir;
  auto images = read_idx_images(dir.write("images.idx", bytes));
  BOOST_REQUIRE(!images);
  return images.err().message;
}

std::string labels_error(const std::vector<std::uint8_t>& bytes) {
  scratch_dir dir;
  auto labels = read_idx_labels(dir.write("labels.idx", bytes));
  BOOST_REQUIRE(!labels);
  return labels.err().message;
}

void check_fixture(const dataset& data) {
  BOOST_TEST(data.size() == 3u);
  BOOST_TEST((data.sample_shape == shape{1, 2, 3}));
  BOOST_TEST(data.classes == 3u);
  BOOST_TEST(data.features.size() == 18u);
  for (std::size_t i = 0; i < data.features.size(); ++i)
    BOOST_TEST(data.features[i] == static_cast<float>(i));
  BOOST_TEST(data.labels == (std::vector<std::int32_t>{2, 0, 1}), boost::test_tools::per_element());
  const auto second = data.sample(1);
  BOOST_TEST(std::vector<float>(second.begin(), second.end())
               == (std::vector<float>{6, 7, 8, 9, 10, 11}),
             boost::test_tools::per_element());
}

} // namespace

BOOST_AUTO_TEST_CASE(reads_plain_ubyte_images_and_labels) {
  scratch_dir dir;
  auto data = read_idx(dir.write("i.idx", image_bytes), dir.write("l.idx", label_bytes));
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  check_fixture(*data);
}

BOOST_AUTO_TEST_CASE(reads_gzip_files_like_plain_ones) {
  scratch_dir dir;
  auto data = read_idx(dir.write_gzip("i.idx.gz", image_bytes),
                       dir.write_gzip("l.idx.gz", label_bytes));
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  check_fixture(*data);
}

BOOST_AUTO_TEST_CASE(reads_signed_byte_short_and_int_images) {
  scratch_dir dir;
  auto bytes = idx_header(0x09, {1, 1, 2});
  bytes.insert(bytes.end(), {0xff, 0x7f});  // -1, 127
  auto byte_images = read_idx_images(dir.write("b.idx", bytes));
  BOOST_REQUIRE_MESSAGE(byte_images.ok(), strom::test::error_text(byte_images));
  BOOST_TEST(byte_images->features == (std::vector<float>{-1, 127}), boost::test_tools::per_element());

  bytes = idx_header(0x0B, {1, 1, 2});
  put_be(bytes, 0xfffe, 2);  // -2
  put_be(bytes, 1000, 2);
  auto short_images = read_idx_images(dir.write("s.idx", bytes));
  BOOST_REQUIRE_MESSAGE(short_images.ok(), strom::test::error_text(short_images));
  BOOST_TEST(short_images->features == (std::vector<float>{-2, 1000}), boost::test_tools::per_element());

  bytes = idx_header(0x0C, {1, 1, 2});
  put_be(bytes, 0xfffffffdu, 4);  // -3
  put_be(bytes, 100000, 4);
  auto int_images = read_idx_images(dir.write("n.idx", bytes));
  BOOST_REQUIRE_MESSAGE(int_images.ok(), strom::test::error_text(int_images));
  BOOST_TEST(int_images->features == (std::vector<float>{-3, 100000}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reads_float_and_double_images) {
  scratch_dir dir;
  auto bytes = idx_header(0x0D, {2, 1, 1});
  put_be(bytes, std::bit_cast<std::uint32_t>(1.5f), 4);
  put_be(bytes, std::bit_cast<std::uint32_t>(-0.25f), 4);
  auto floats = read_idx_images(dir.write("f.idx", bytes));
  BOOST_REQUIRE_MESSAGE(floats.ok(), strom::test::error_text(floats));
  BOOST_TEST(floats->features == (std::vector<float>{1.5f, -0.25f}), boost::test_tools::per_element());

  bytes = idx_header(0x0E, {2, 1, 1});
  put_be(bytes, std::bit_cast<std::uint64_t>(3.0), 8);
  put_be(bytes, std::bit_cast<std::uint64_t>(-7.5), 8);
  auto doubles = read_idx_images(dir.write("d.idx", bytes));
  BOOST_REQUIRE_MESSAGE(doubles.ok(), strom::test::error_text(doubles));
  BOOST_TEST(doubles->features == (std::vector<float>{3.0f, -7.5f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reads_short_and_int_labels) {
  scratch_dir dir;
  auto bytes = idx_header(0x0B, {2});
  put_be(bytes, 300, 2);
  put_be(bytes, 7, 2);
  auto shorts = read_idx_labels(dir.write("s.idx", bytes));
  BOOST_REQUIRE_MESSAGE(shorts.ok(), strom::test::error_text(shorts));
  BOOST_TEST(*shorts == (std::vector<std::int32_t>{300, 7}), boost::test_tools::per_element());

  bytes = idx_header(0x0C, {1});
  put_be(bytes, 70000, 4);
  auto ints = read_idx_labels(dir.write("i.idx", bytes));
  BOOST_REQUIRE_MESSAGE(ints.ok(), strom::test::error_text(ints));
  BOOST_TEST(ints->at(0) == 70000);
}

BOOST_AUTO_TEST_CASE(two_and_four_dimensional_images_give_flat_and_channel_shapes) {
  scratch_dir dir;
  auto flat = read_idx_images(dir.write("2.idx", idx_ubyte({2, 3}, {1, 2, 3, 4, 5, 6})));
  BOOST_REQUIRE_MESSAGE(flat.ok(), strom::test::error_text(flat));
  BOOST_TEST((flat->sample_shape == shape{1, 1, 3}));
  BOOST_TEST(flat->count == 2u);
  auto channels = read_idx_images(dir.write("4.idx", idx_ubyte({1, 3, 2, 1}, {1, 2, 3, 4, 5, 6})));
  BOOST_REQUIRE_MESSAGE(channels.ok(), strom::test::error_text(channels));
  BOOST_TEST((channels->sample_shape == shape{3, 2, 1}));
}

BOOST_AUTO_TEST_CASE(classes_is_max_label_plus_one) {
  scratch_dir dir;
  auto data = read_idx(dir.write("i.idx", idx_ubyte({2, 1, 1}, {0, 0})),
                       dir.write("l.idx", idx_ubyte({2}, {4, 1})));
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->classes == 5u);
}

BOOST_AUTO_TEST_CASE(empty_files_give_an_empty_dataset_with_one_class) {
  scratch_dir dir;
  auto data = read_idx(dir.write("i.idx", idx_ubyte({0, 2, 2}, {})),
                       dir.write("l.idx", idx_ubyte({0}, {})));
  BOOST_REQUIRE_MESSAGE(data.ok(), strom::test::error_text(data));
  BOOST_TEST(data->size() == 0u);
  BOOST_TEST(data->classes == 1u);
  BOOST_TEST((data->sample_shape == shape{1, 2, 2}));
}

// -- corrupt input ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(missing_file_names_path_and_strerror) {
  scratch_dir dir;
  const auto path = dir.file("absent.idx");
  auto data = read_idx(path, path);
  BOOST_REQUIRE(!data);
  check_error(data.err().message, {path, "cannot open", "No such file or directory"});
}

BOOST_AUTO_TEST_CASE(bad_magic_names_expected_and_found_values) {
  auto bytes = image_bytes;
  bytes[0] = 0x12;
  bytes[1] = 0x34;
  check_error(images_error(bytes),
              {"images.idx", "expected IDX magic 0x00000803", "offset 0", "found 0x12340803"});
}

BOOST_AUTO_TEST_CASE(unsupported_type_code_names_code_and_offset) {
  auto bytes = image_bytes;
  bytes[2] = 0x0A;
  check_error(images_error(bytes), {"images.idx", "unsupported IDX type code 0x0a", "offset 2"});
}

BOOST_AUTO_TEST_CASE(float_labels_are_rejected_as_not_integral) {
  auto bytes = idx_header(0x0D, {1});
  put_be(bytes, std::bit_cast<std::uint32_t>(1.0f), 4);
  check_error(labels_error(bytes), {"labels.idx", "0x0d (float)", "not integral", "offset 2"});
}

BOOST_AUTO_TEST_CASE(wrong_dimension_count_is_rejected) {
  check_error(labels_error(idx_ubyte({1, 1}, {0})),
              {"labels.idx", "dimension count of 1", "offset 3", "found 2"});
  check_error(images_error(idx_ubyte({1}, {0})),
              {"images.idx", "dimension count of 2 to 4", "offset 3", "found 1"});
}

BOOST_AUTO_TEST_CASE(file_shorter_than_magic_is_rejected) {
  check_error(images_error({0, 0}), {"images.idx", "4-byte IDX magic", "file ends at offset 2"});
}

BOOST_AUTO_TEST_CASE(truncated_header_is_rejected) {
  auto bytes = image_bytes;
  bytes.resize(10);
  check_error(images_error(bytes),
              {"images.idx", "expected a 16-byte IDX header", "file ends at offset 10"});
}

BOOST_AUTO_TEST_CASE(truncated_image_data_names_expected_bytes_and_end_offset) {
  auto bytes = image_bytes;
  bytes.resize(20);
  check_error(images_error(bytes), {"images.idx", "expected 18 bytes of image data after the "
                                    "16-byte header (3 x 2 x 3 ubyte)",
                                    "file ends at offset 20"});
}

BOOST_AUTO_TEST_CASE(fashion_mnist_sized_header_on_tiny_file_fails_without_allocating) {
  // The header claims 60000 x 28 x 28 images; the check against the real length comes first.
  check_error(images_error(idx_ubyte({60000, 28, 28}, {1, 2, 3})),
              {"expected 47040000 bytes of image data", "file ends at offset 19"});
}

BOOST_AUTO_TEST_CASE(trailing_bytes_are_rejected) {
  auto bytes = label_bytes;
  bytes.push_back(9);
  check_error(labels_error(bytes),
              {"labels.idx", "expected 3 bytes of label data", "found 1 extra bytes from offset 11"});
}

BOOST_AUTO_TEST_CASE(overflowing_dimensions_are_rejected) {
  check_error(images_error(idx_header(0x0E, {0xffffffff, 0xffffffff, 0xffffffff})),
              {"images.idx", "4294967295 x 4294967295 x 4294967295", "overflow 64 bits"});
  check_error(images_error(idx_header(0x0E, {0x80000000, 0x80000000, 1})),
              {"images.idx", "of double elements", "overflow 64 bits"});
}

BOOST_AUTO_TEST_CASE(dimensions_just_below_64_bits_are_refused_by_the_size_bound) {
  // 16 x (2^30 - 1) x (2^30 + 1) ubyte: 2^64 - 16 bytes, which the 16-byte header would wrap
  // to 0 bytes in all.
  check_error(images_error(idx_header(0x08, {16, 0x3fffffff, 0x40000001})),
              {"images.idx", "expected 18446744073709551600 bytes of image data",
               "more than the limit of 1073741824"});
}

BOOST_AUTO_TEST_CASE(zero_sample_dimension_is_rejected) {
  check_error(images_error(idx_header(0x08, {2, 0, 3})),
              {"images.idx", "dimension 1 at offset 8 is 0"});
}

BOOST_AUTO_TEST_CASE(negative_label_names_value_and_offset) {
  auto bytes = idx_header(0x09, {2});
  bytes.insert(bytes.end(), {1, 0xfe});
  check_error(labels_error(bytes), {"labels.idx", "label -2 at offset 9", "outside [0,"});
}

BOOST_AUTO_TEST_CASE(huge_label_is_rejected) {
  auto bytes = idx_header(0x0C, {1});
  put_be(bytes, 2000000000, 4);
  check_error(labels_error(bytes), {"label 2000000000 at offset 8", "outside [0, 1048576)"});
}

BOOST_AUTO_TEST_CASE(image_and_label_count_mismatch_names_both_files) {
  scratch_dir dir;
  const auto images = dir.write("i.idx", image_bytes);
  const auto labels = dir.write("l.idx", idx_ubyte({2}, {0, 1}));
  auto data = read_idx(images, labels);
  BOOST_REQUIRE(!data);
  check_error(data.err().message, {images, "3 images", labels, "2 labels"});
}

BOOST_AUTO_TEST_CASE(corrupt_gzip_stream_names_decompressed_offset) {
  scratch_dir dir;
  // Incompressible-looking content makes the deflate data long enough to damage its middle.
  std::vector<std::uint8_t> elements(4096);
  std::uint32_t x = 12345;
  for (auto& e : elements) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<std::uint8_t>(x >> 24);
  }
  const auto path = dir.write_gzip("i.idx.gz", idx_ubyte({16, 16, 16}, elements));
  std::vector<std::uint8_t> gz;
  {
    std::ifstream in(path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 16; ++i)
    gz[i] ^= 0x5a;
  auto images = read_idx_images(dir.write("bad.idx.gz", gz));
  BOOST_REQUIRE(!images);
  check_error(images.err().message, {"bad.idx.gz", "corrupt gzip stream", "decompressed offset"});
}

BOOST_AUTO_TEST_CASE(truncated_gzip_stream_is_rejected) {
  scratch_dir dir;
  const auto path = dir.write_gzip("i.idx.gz", image_bytes);
  std::vector<std::uint8_t> gz;
  {
    std::ifstream in(path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  gz.resize(gz.size() - 12);
  auto images = read_idx_images(dir.write("cut.idx.gz", gz));
  BOOST_REQUIRE(!images);
  check_error(images.err().message, {"cut.idx.gz", "corrupt gzip stream", "ends at offset"});
}
