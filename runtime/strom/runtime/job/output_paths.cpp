#include "strom/runtime/job/output_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace strom::runtime {

namespace {

/// Creates and removes a probe file in `dir`; the name holds the pid so that two processes
/// probing one folder do not collide.
result<void> probe_folder(const std::filesystem::path& dir, const std::string& what) {
  const auto probe = dir / fmt::format(".strom-write-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return error{fmt::format("{}: cannot create a file in {}: {}", what, dir.string(),
                             std::strerror(errno))};
  ::close(fd);
  if (::unlink(probe.c_str()) != 0)
    return error{fmt::format("{}: cannot remove the probe file {}: {}", what, probe.string(),
                             std::strerror(errno))};
  return success();
}

} // namespace

result<void> check_writable_dir(const std::string& dir, const std::string& option) {
  const auto what = fmt::format("{} {}", option, dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return error{fmt::format("{}: cannot create the folder: {}", what, ec.message())};
  if (!std::filesystem::is_directory(dir, ec))
    return error{fmt::format("{}: not a folder", what)};
  return probe_folder(dir, what);
}

result<void> check_writable_file(const std::string& path, const std::string& option) {
  const auto what = fmt::format("{} {}", option, path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return error{fmt::format("{}: is a folder, expected a file name", what)};
  auto parent = std::filesystem::path{path}.parent_path();
  if (parent.empty())
    parent = ".";
  // A missing parent or one that is a file: the probe's OS error says which.
  return probe_folder(parent, what);
}

result<void> check_training_outputs(const std::string& checkpoint_dir,
                                    const std::optional<std::string>& metrics_out) {
  if (!checkpoint_dir.empty())
    if (auto ok = check_writable_dir(checkpoint_dir, "--checkpoint-dir"); !ok)
      return ok;
  if (metrics_out)
    return check_writable_file(*metrics_out, "--metrics-out");
  return success();
}

} // namespace strom::runtime
