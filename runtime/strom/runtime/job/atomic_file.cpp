#include "strom/runtime/job/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace strom::runtime {

result<void> write_file_atomically(const std::string& path, std::span<const std::byte> bytes,
                                   const char* what) {
  const auto parent = std::filesystem::path{path}.parent_path();
  std::error_code ec;
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  if (ec)
    return error{
      fmt::format("{}: cannot create folder {}: {}", path, parent.string(), ec.message())};
  const std::string temp = path + ".partial";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return error{fmt::format("{}: cannot write {}: {}", temp, what, std::strerror(errno))};
  std::size_t written = 0;
  while (written < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return error{fmt::format("{}: write of {} failed: {}", temp, what, std::strerror(err))};
    }
    written += static_cast<std::size_t>(n);
  }
  // On disk before the rename: a crash after it must find the new content, not a hole.
  const bool synced = ::fsync(fd) == 0;
  const int sync_err = errno;
  ::close(fd);
  if (!synced)
    return error{
      fmt::format("{}: cannot flush {} to disk: {}", temp, what, std::strerror(sync_err))};
  std::filesystem::rename(temp, path, ec);
  if (ec)
    return error{fmt::format("{}: cannot move {} into place: {}", path, what, ec.message())};
  return success();
}

} // namespace strom::runtime
