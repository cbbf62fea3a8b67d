#include "strom/compute/frames/frame_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace strom::compute {

namespace {

struct file_closer {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

} // namespace

result<void> write_frame_file(const std::filesystem::path& path, const frame& f) {
  file_ptr file{std::fopen(path.c_str(), "wb")};
  if (!file)
    return error{fmt::format("{}: cannot open for writing: {}", path.string(),
                             std::strerror(errno))};
  if (std::fwrite(f.bytes().data(), 1, f.size(), file.get()) != f.size())
    return error{fmt::format("{}: short write of {} bytes: {}", path.string(), f.size(),
                             std::strerror(errno))};
  if (std::fclose(file.release()) != 0)
    return error{fmt::format("{}: closing failed: {}", path.string(), std::strerror(errno))};
  return success();
}

result<frame> read_frame_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return error{fmt::format("{}: cannot read: {}", path.string(), ec.message())};
  if (auto ok = frame::check_size(size); !ok)
    return error{fmt::format("{}: {}", path.string(), ok.err().message)};
  file_ptr file{std::fopen(path.c_str(), "rb")};
  if (!file)
    return error{fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno))};
  auto storage = allocate_frame_words(size / sizeof(capnp::word));
  if (std::fread(storage.get(), 1, size, file.get()) != size)
    return error{fmt::format("{}: expected {} bytes, read fewer", path.string(), size)};
  const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(storage.get()),
                                         size};
  auto f = frame::from_bytes(bytes, std::move(storage));
  if (!f)
    return error{fmt::format("{}: {}", path.string(), f.err().message)};
  return f;
}

} // namespace strom::compute
