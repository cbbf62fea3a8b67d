// Writes the regression corpus of the data file and checkpoint readers under
// tests/fuzz/corpus/{idx,csv,checkpoint}/: valid files made by zlib and save_checkpoint, and
// the hostile variants each reader must refuse (gzip bombs whose header or trailer claims more
// than allowed, truncated files, flipped bits, lying sizes). Run it after changing a format,
// then commit the result (crash_* files are what libFuzzer found, kept by hand):
//   ninja -C BUILD fuzz_make_data_corpus && BUILD/tests/fuzz/fuzz_make_data_corpus tests/fuzz/corpus

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "corpus_files.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/checkpoint.hpp"

namespace {

namespace fs = std::filesystem;
using namespace strom;

using bytes = std::vector<std::uint8_t>;

/// Zeros behind the gzip bombs' headers: 4 MiB deflate to about 4 KiB, small enough to commit.
constexpr std::size_t bomb_zeros = std::size_t{4} << 20;

/// gzip's trailer ends with ISIZE, 4 bytes little-endian (RFC 1952, 2.3.1).
constexpr std::size_t isize_bytes = 4;

void write(const fs::path& folder, const std::string& name, const bytes& content) {
  fuzz::write_corpus_file(folder, name, content);
}

bytes read(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  bytes content;
  for (int c; file != nullptr && (c = std::fgetc(file)) != EOF;)
    content.push_back(static_cast<std::uint8_t>(c));
  if (file != nullptr)
    std::fclose(file);
  return content;
}

/// `raw` as one gzip member (zlib's deflate with the gzip wrapper).
bytes gzip_of(const bytes& raw) {
  z_stream stream{};
  // windowBits 16 + 15: gzip wrapper (zlib manual, deflateInit2); memLevel 8 is zlib's default.
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    std::exit(1);
  bytes out(deflateBound(&stream, raw.size()));
  stream.next_in = const_cast<Bytef*>(raw.data());
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END)
    std::exit(1);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

bytes with_isize(bytes gz, std::uint32_t isize) {
  for (std::size_t i = 0; i < isize_bytes; ++i)
    gz[gz.size() - isize_bytes + i] = static_cast<std::uint8_t>(isize >> (8 * i));
  return gz;
}

using fuzz::flip_bit;

bytes cut(bytes b, std::size_t size) {
  b.resize(size);
  return b;
}

bytes joined(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bytes idx(std::uint8_t type, std::initializer_list<std::uint32_t> dimensions,
          const bytes& elements) {
  bytes out{0, 0, type, static_cast<std::uint8_t>(dimensions.size())};
  for (const auto d : dimensions)
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(d >> shift));
  out.insert(out.end(), elements.begin(), elements.end());
  return out;
}

void write_idx_corpus(const fs::path& folder) {
  bytes pixels(3 * 4 * 4);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<std::uint8_t>(i * 37);
  const auto images = idx(0x08, {3, 4, 4}, pixels);
  const auto labels = idx(0x08, {3}, {2, 0, 1});
  write(folder, "valid_images", images);
  write(folder, "valid_labels", labels);
  write(folder, "valid_images_gzip", gzip_of(images));
  write(folder, "valid_labels_gzip", gzip_of(labels));
  write(folder, "valid_two_members_gzip", joined(gzip_of(cut(images, 20)),
                                                 gzip_of(bytes(images.begin() + 20, images.end()))));
  write(folder, "valid_float_4d", idx(0x0D, {1, 1, 2, 1}, {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}));
  write(folder, "valid_empty", idx(0x08, {0, 28, 28}, {}));
  write(folder, "truncated_magic", cut(images, 3));
  write(folder, "truncated_header", cut(images, 10));
  write(folder, "truncated_data", cut(images, images.size() - 1));
  write(folder, "extra_byte", joined(images, {7}));
  write(folder, "bad_magic", flip_bit(images, 3));
  write(folder, "zero_sample_dimension", idx(0x08, {3, 0, 4}, {}));
  write(folder, "huge_dimensions", idx(0x0E, {60000, 100000, 100000}, {}));
  write(folder, "overflowing_dimensions", idx(0x0E, {0xffffffff, 0xffffffff, 0xffffffff}, {}));
  // 2^64 - 16 bytes: the header's 16 bytes would wrap the total to 0.
  write(folder, "wrapping_dimensions", idx(0x08, {16, 0x3fffffff, 0x40000001}, {}));
  write(folder, "negative_label", idx(0x09, {1}, {0xfe}));
  const auto gz = gzip_of(images);
  write(folder, "gzip_truncated", cut(gz, gz.size() - 12));
  write(folder, "gzip_flipped_bit", flip_bit(gz, gz.size() * 4));
  write(folder, "gzip_garbage_after", joined(gz, {1, 2, 3}));
  write(folder, "gzip_lying_trailer", with_isize(gz, 0x7f000000));

  // gzip bombs: a small header, then 4 MiB of zeros the header does not declare.
  auto bomb = idx(0x08, {10, 28, 28}, {});
  bomb.resize(bomb.size() + bomb_zeros);
  const auto bomb_gz = gzip_of(bomb);
  write(folder, "bomb_honest_trailer", bomb_gz);  // ISIZE says 4 MiB: refused before inflating
  // ISIZE agrees with the header: refused one byte past the declared content.
  write(folder, "bomb_matching_trailer", with_isize(bomb_gz, 16 + 10 * 28 * 28));
  // A header declaring 60000 x 1000 x 1000 bytes: refused by the size bound.
  auto huge = idx(0x08, {60000, 1000, 1000}, {});
  huge.resize(huge.size() + bomb_zeros);
  write(folder, "bomb_huge_header", gzip_of(huge));
}

bytes text(const std::string& options, const std::string& content) {
  bytes out(options.begin(), options.end());
  out.insert(out.end(), content.begin(), content.end());
  return out;
}

void write_csv_corpus(const fs::path& folder) {
  // The first byte is the fuzz target's layout selector: '\0' label first, no header, ','.
  const std::string table = "1,0.5,2\n0,-1e3,+4\r\n\n2, 3 ,\t5\n";
  write(folder, "valid", text(std::string(1, '\0'), table));
  write(folder, "valid_header_semicolon_label_2",
        text(std::string(1, static_cast<char>(1 | 2 << 1 | 8)), "a;b;label\n0.1;2;1\n3;4;0\n"));
  const auto gz = gzip_of(bytes(table.begin(), table.end()));
  write(folder, "valid_gzip", joined({0}, gz));
  write(folder, "gzip_truncated", joined({0}, cut(gz, gz.size() - 5)));
  write(folder, "gzip_flipped_bit", joined({0}, flip_bit(gz, gz.size() * 4)));
  write(folder, "gzip_lying_trailer", joined({0}, with_isize(gz, 0xffffffff)));
  write(folder, "ragged", text(std::string(1, '\0'), "1,2,3\n0,1\n"));
  write(folder, "nan_feature", text(std::string(1, '\0'), "1,nan\n"));
  write(folder, "huge_label", text(std::string(1, '\0'), "99999999999,1\n"));
  write(folder, "label_only", text(std::string(1, '\0'), "1\n"));
  write(folder, "no_data_lines", text(std::string(1, '\0'), "\n \n"));
  write(folder, "binary", bytes{0, 0xff, 0xfe, 0, ',', 0x80, '\n', 0x01});
  std::string zeros_table;
  for (int i = 0; i < 100000; ++i)
    zeros_table += "0,0,0,0\n";
  write(folder, "gzip_many_rows", joined({0}, gzip_of(bytes(zeros_table.begin(),
                                                              zeros_table.end()))));
}

constexpr const char* checkpoint_job = R"((
  name = "tiny",
  network = (input = (width = 6), layers = [
    (dense = (units = 8, activation = relu)), (batchNormalization = ()), (output = (units = 3))]),
  training = (batchSize = 4, seed = 5, updater = (learningRate = 0.01, adam = ()))))";

void write_checkpoint_corpus(const fs::path& folder) {
  auto job = runtime::parse_job_text(checkpoint_job, "tiny.job", ".");
  auto trained = compute::make_replica(job->reader(), 0);
  if (!job || !trained)
    std::exit(1);
  const auto scratch = fs::temp_directory_path() / "strom-make-data-corpus.ckpt";
  const auto save = [&] {
    if (!runtime::save_checkpoint(scratch.string(), *job, **trained, {1, 3, 12, 0.5f, 0.7f}).ok())
      std::exit(1);
    auto content = read(scratch.string());
    fs::remove(scratch);
    return content;
  };
  const auto valid = save();
  write(folder, "valid", valid);
  write(folder, "truncated", cut(valid, valid.size() - 64));
  write(folder, "half", cut(valid, valid.size() / 2 / 8 * 8));
  write(folder, "flipped_bit_middle", flip_bit(valid, valid.size() * 4));
  write(folder, "flipped_bit_end", flip_bit(valid, valid.size() * 8 - 200));
  write(folder, "flipped_bit_header", flip_bit(valid, 40));
  write(folder, "zeros", bytes(valid.size(), 0));
  write(folder, "all_ones", bytes(64, 0xff));
  // Checksums intact, values not: refused by restore_checkpoint, which the target skips.
  (*trained)->net().parameters()[5] = std::numeric_limits<float>::quiet_NaN();
  write(folder, "nan_parameter", save());
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_data_corpus CORPUS_FOLDER\n");
    return 2;
  }
  const fs::path root = argv[1];
  write_idx_corpus(root / "idx");
  write_csv_corpus(root / "csv");
  write_checkpoint_corpus(root / "checkpoint");
  return 0;
}
