#include "strom/compute/data/file_contents.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

namespace strom::compute {

namespace {

/// Deflate's best case is 1032:1 (zlib technical details, "Maximum compression factor"),
/// so a gzip file can never legitimately decompress to more than this many times its size.
constexpr std::uint64_t max_deflate_ratio = 1032;

/// A trailer's size claim is believed up to this multiple of the compressed size (more than
/// pixels or text usually compress, Fashion-MNIST's images are 1.8:1); beyond it the output
/// grows as data actually arrives, so a lying trailer cannot size a big allocation.
constexpr std::uint64_t believed_claim_ratio = 16;

/// Read size for files whose length fstat cannot tell (pipes, devices).
constexpr std::size_t unknown_size_chunk = 1 << 16;

/// gzip's member header starts with these two bytes (RFC 1952, section 2.3.1).
constexpr std::uint8_t gzip_magic[2] = {0x1f, 0x8b};

/// zlib's windowBits for "gzip wrapper only" (zlib manual, inflateInit2).
constexpr int gzip_window_bits = 16 + MAX_WBITS;

bool starts_with_gzip_magic(const std::uint8_t* data, std::size_t size) {
  return size >= 2 && data[0] == gzip_magic[0] && data[1] == gzip_magic[1];
}

/// Closes a file descriptor on scope exit.
struct fd_closer {
  int fd;
  ~fd_closer() { ::close(fd); }
};

result<std::vector<std::uint8_t>> read_raw(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
  fd_closer closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return error{fmt::format("{}: cannot stat: {}", path, std::strerror(errno))};
  if (S_ISDIR(info.st_mode))
    return error{fmt::format("{}: cannot read: is a directory", path)};
  if (static_cast<std::uint64_t>(info.st_size) > max_file_contents)
    return error{fmt::format("{}: file has {} bytes, more than the limit of {}", path,
                             info.st_size, max_file_contents)};
  std::vector<std::uint8_t> bytes;
  // One byte more than the file so that the read which sees end-of-file needs no growth.
  bytes.resize(S_ISREG(info.st_mode) ? static_cast<std::size_t>(info.st_size) + 1
                                     : unknown_size_chunk);
  std::size_t filled = 0;
  for (;;) {
    if (filled == bytes.size()) {
      if (bytes.size() > max_file_contents)
        return error{fmt::format("{}: file exceeds the limit of {} bytes", path,
                                 max_file_contents)};
      bytes.resize(bytes.size() * 2);
    }
    const ssize_t got = ::read(fd, bytes.data() + filled, bytes.size() - filled);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return error{fmt::format("{}: read failed at offset {}: {}", path, filled,
                               std::strerror(errno))};
    }
    if (got == 0)
      break;
    filled += static_cast<std::size_t>(got);
  }
  bytes.resize(filled);
  return bytes;
}

/// Ends a zlib inflate stream on scope exit.
struct inflate_closer {
  z_stream* stream;
  ~inflate_closer() { inflateEnd(stream); }
};

/// The uncompressed size that the last member's trailer claims (RFC 1952 ISIZE, modulo
/// 2^32); only a first guess for the output buffer, never trusted.
std::uint64_t claimed_size(const std::vector<std::uint8_t>& compressed) {
  const std::size_t n = compressed.size();
  if (n < 4)
    return 0;
  return std::uint64_t{compressed[n - 4]} | std::uint64_t{compressed[n - 3]} << 8
         | std::uint64_t{compressed[n - 2]} << 16 | std::uint64_t{compressed[n - 1]} << 24;
}

result<std::vector<std::uint8_t>> gunzip(const std::string& path,
                                         const std::vector<std::uint8_t>& compressed) {
  const std::uint64_t limit = std::min(max_file_contents, compressed.size() * max_deflate_ratio);
  std::vector<std::uint8_t> out;
  const std::uint64_t believed = std::min(limit, compressed.size() * believed_claim_ratio);
  out.resize(static_cast<std::size_t>(
    std::clamp<std::uint64_t>(claimed_size(compressed), 1, believed)));

  z_stream stream{};
  if (inflateInit2(&stream, gzip_window_bits) != Z_OK)
    return error{fmt::format("{}: cannot start gzip decompression: out of memory", path)};
  inflate_closer closer{&stream};

  std::size_t consumed = 0;  // compressed bytes handed to zlib and used
  std::size_t produced = 0;  // decompressed bytes written to `out`
  for (;;) {
    if (produced == out.size()) {
      if (out.size() >= limit)
        return error{fmt::format(
          "{}: gzip stream decompresses to more than {} bytes (the limit for a {}-byte file)",
          path, limit, compressed.size())};
      out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(limit, out.size() * 2ull)));
    }
    // zlib counts in uInt (32 bits): feed at most that much per call.
    const std::size_t in_chunk = std::min<std::size_t>(compressed.size() - consumed, UINT_MAX);
    const std::size_t out_chunk = std::min<std::size_t>(out.size() - produced, UINT_MAX);
    stream.next_in = const_cast<Bytef*>(compressed.data() + consumed);
    stream.avail_in = static_cast<uInt>(in_chunk);
    stream.next_out = out.data() + produced;
    stream.avail_out = static_cast<uInt>(out_chunk);
    const int status = inflate(&stream, Z_NO_FLUSH);
    consumed += in_chunk - stream.avail_in;
    produced += out_chunk - stream.avail_out;
    switch (status) {
      case Z_OK:
        break;
      case Z_STREAM_END:
        if (consumed == compressed.size()) {
          out.resize(produced);
          return out;
        }
        if (!starts_with_gzip_magic(compressed.data() + consumed, compressed.size() - consumed))
          return error{fmt::format(
            "{}: expected another gzip member or the end of the file at compressed offset {} "
            "(decompressed offset {}), found {} more bytes",
            path, consumed, produced, compressed.size() - consumed)};
        inflateReset(&stream);
        break;
      case Z_BUF_ERROR:
        // No progress possible: either the output is full (grown above) or the input ran out.
        if (stream.avail_out == 0)
          break;
        return error{fmt::format("{}: corrupt gzip stream: compressed data ends at offset {} "
                                 "before the stream does (decompressed offset {})",
                                 path, consumed, produced)};
      default:
        return error{fmt::format(
          "{}: corrupt gzip stream at decompressed offset {} (compressed offset {}): {}", path,
          produced, consumed, stream.msg ? stream.msg : zError(status))};
    }
  }
}

} // namespace

result<std::vector<std::uint8_t>> read_file_contents(const std::string& path) {
  auto raw = read_raw(path);
  if (!raw)
    return raw;
  if (!starts_with_gzip_magic(raw->data(), raw->size()))
    return raw;
  return gunzip(path, *raw);
}

} // namespace strom::compute
