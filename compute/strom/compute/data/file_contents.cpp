#include "strom/compute/data/file_contents.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "strom/compute/data/data_content.hpp"

namespace strom::compute {

namespace {

/// A trailer's size claim is believed up to this multiple of the compressed size (more than
/// pixels or text usually compress, Fashion-MNIST's images are 1.8:1); beyond it the output
/// grows as data actually arrives, so a lying trailer cannot size a big allocation.
constexpr std::uint64_t believed_claim_ratio = 16;

/// Read size for files whose length fstat cannot tell (pipes, devices).
constexpr std::size_t unknown_size_chunk = 1 << 16;

/// Closes a file descriptor on scope exit.
struct fd_closer {
  int fd;
  ~fd_closer() { ::close(fd); }
};

} // namespace

result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path, std::uint64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
  fd_closer closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return error{fmt::format("{}: cannot stat: {}", path, std::strerror(errno))};
  if (S_ISDIR(info.st_mode))
    return error{fmt::format("{}: cannot read: is a directory", path)};
  if (static_cast<std::uint64_t>(info.st_size) > limit)
    return error{fmt::format("{}: file has {} bytes, more than the limit of {}", path,
                             info.st_size, limit)};
  std::vector<std::uint8_t> bytes;
  // One byte more than the file so that the read which sees end-of-file needs no growth.
  bytes.resize(S_ISREG(info.st_mode) ? static_cast<std::size_t>(info.st_size) + 1
                                     : unknown_size_chunk);
  std::size_t filled = 0;
  for (;;) {
    if (filled == bytes.size()) {
      // A file that grew since fstat, or a pipe: never hold more than limit + 1 bytes.
      if (bytes.size() > limit)
        return error{fmt::format("{}: file exceeds the limit of {} bytes", path, limit)};
      bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() * 2, limit + 1)));
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

result<std::vector<std::uint8_t>> decompressed_contents(const std::string& name,
                                                        std::vector<std::uint8_t> file_bytes,
                                                        std::uint64_t limit) {
  if (!data_content::is_gzip(file_bytes)) {
    if (file_bytes.size() > limit)
      return error{fmt::format("{}: file has {} bytes, more than the limit of {}", name,
                               file_bytes.size(), limit)};
    return file_bytes;
  }
  data_content content{name, std::move(file_bytes)};
  const std::uint64_t bound = std::min(limit, content.max_content_size());
  const std::uint64_t believed = std::min(bound, content.file_size() * believed_claim_ratio);
  std::vector<std::uint8_t> out(
    static_cast<std::size_t>(std::clamp<std::uint64_t>(content.trailer_size(), 1, believed)));
  std::size_t filled = 0;
  for (;;) {
    if (filled == out.size()) {
      if (out.size() >= bound) {
        // Full at the bound: one byte more, into a byte on the stack, tells if it overflows.
        std::uint8_t probe = 0;
        auto more = content.read({&probe, 1});
        if (!more)
          return more.err();
        if (*more != 0)
          return error{fmt::format(
            "{}: gzip stream decompresses to more than {} bytes (the limit for a {}-byte file)",
            name, bound, content.file_size())};
        return out;
      }
      out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(bound, out.size() * 2ull)));
    }
    const std::span<std::uint8_t> room{out.data() + filled, out.size() - filled};
    auto got = content.read(room);
    if (!got)
      return got.err();
    filled += *got;
    if (*got < room.size()) {
      out.resize(filled);
      return out;
    }
  }
}

result<std::vector<std::uint8_t>> read_file_contents(const std::string& path, std::uint64_t limit) {
  auto raw = read_file_bytes(path, limit);
  if (!raw)
    return raw;
  return decompressed_contents(path, std::move(*raw), limit);
}

} // namespace strom::compute
