#include "strom/runtime/node/machine_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "strom/compute/memory_estimate.hpp"

namespace strom::runtime {

namespace {

namespace fs = std::filesystem;

/// Where cgroup file systems are mounted (v2 at the root, v1's memory controller below it).
const fs::path cgroup_root = "/sys/fs/cgroup";

std::optional<std::string> file_text(const fs::path& path) {
  std::ifstream in{path};
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

/// The unsigned decimal number that `text` holds (surrounding white space allowed).
std::optional<std::uint64_t> number_in(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos)
    return std::nullopt;
  text.remove_prefix(first);
  text = text.substr(0, text.find_last_not_of(" \t\n") + 1);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

/// The cgroup path of this process for `controller` ("" for v2's unified line "0::PATH").
std::optional<std::string> cgroup_path(std::string_view controller) {
  auto text = file_text("/proc/self/cgroup");
  if (!text)
    return std::nullopt;
  std::istringstream lines{*text};
  for (std::string line; std::getline(lines, line);) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string_view controllers{line.data() + first + 1, second - first - 1};
    if (controllers == controller || (!controller.empty() && controllers.find(controller) == 0))
      return line.substr(second + 1);
  }
  return std::nullopt;
}

/// Limit minus usage of the cgroup in `dir`, if it has a limit.
std::optional<std::uint64_t> cgroup_room(const fs::path& dir, const char* limit_file,
                                         const char* usage_file) {
  auto limit = file_text(dir / limit_file);
  if (!limit)
    return std::nullopt;
  auto bytes = number_in(*limit);  // "max" (v2) or a huge v1 value: no limit
  if (!bytes || *bytes >= (std::uint64_t{1} << 62))
    return std::nullopt;
  auto usage = file_text(dir / usage_file);
  auto used = usage ? number_in(*usage) : std::nullopt;
  return *bytes - std::min(*bytes, used.value_or(0));
}

/// The tightest cgroup limit on this process (v2, else v1), with where it was read.
std::optional<available_memory> cgroup_memory() {
  std::optional<available_memory> tightest;
  auto consider = [&](std::optional<std::uint64_t> room, const fs::path& where) {
    if (room && (!tightest || *room < tightest->bytes))
      tightest = available_memory{*room, where.string()};
  };
  if (auto path = cgroup_path(""))
    for (fs::path dir = cgroup_root / fs::path{*path}.relative_path();; dir = dir.parent_path()) {
      consider(cgroup_room(dir, "memory.max", "memory.current"), dir / "memory.max");
      if (dir == cgroup_root || !dir.has_relative_path())
        break;
    }
  const fs::path v1 = cgroup_root / "memory";
  if (auto path = cgroup_path("memory"))
    consider(cgroup_room(v1 / fs::path{*path}.relative_path(), "memory.limit_in_bytes",
                         "memory.usage_in_bytes"),
             v1 / fs::path{*path}.relative_path() / "memory.limit_in_bytes");
  consider(cgroup_room(v1, "memory.limit_in_bytes", "memory.usage_in_bytes"),
           v1 / "memory.limit_in_bytes");
  return tightest;
}

} // namespace

std::optional<std::uint64_t> mem_available_bytes(std::string_view meminfo) {
  constexpr std::string_view key = "MemAvailable:";
  constexpr std::uint64_t kib = 1024;  // /proc/meminfo counts in kB, which are KiB
  auto at = meminfo.find(key);
  if (at == std::string_view::npos)
    return std::nullopt;
  auto rest = meminfo.substr(at + key.size());
  rest = rest.substr(0, rest.find('\n'));
  auto unit = rest.find("kB");
  if (unit == std::string_view::npos)
    return std::nullopt;
  auto value = number_in(rest.substr(0, unit));
  if (!value)
    return std::nullopt;
  return *value * kib;
}

result<std::optional<available_memory>> read_available_memory() {
  if (const char* told = std::getenv(memory_limit_variable)) {
    auto bytes = number_in(told);
    if (!bytes)
      return error{fmt::format("{}: '{}' is not a number of bytes", memory_limit_variable, told)};
    return std::optional{available_memory{*bytes, memory_limit_variable}};
  }
  std::optional<available_memory> found;
  if (auto meminfo = file_text("/proc/meminfo"))
    if (auto bytes = mem_available_bytes(*meminfo))
      found = available_memory{*bytes, "MemAvailable in /proc/meminfo"};
  if (auto limited = cgroup_memory(); limited && (!found || limited->bytes < found->bytes))
    found = limited;
  return found;
}

result<void> check_job_memory(const job_spec& job, std::uint32_t workers, bool shares_updates) {
  auto estimate = compute::estimate_memory(job.reader(), {workers, shares_updates});
  if (!estimate)
    return error{fmt::format("{}: {}", job.source(), estimate.err().message)};
  auto available = read_available_memory();
  if (!available)
    return available.err();
  if (!*available || estimate->total() <= (*available)->bytes)
    return success();
  return error{fmt::format("{}: the model needs {} but this machine has {} available ({})",
                           job.source(), compute::to_string(*estimate),
                           compute::bytes_text((*available)->bytes), (*available)->source)};
}

} // namespace strom::runtime
