#include "strom/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace strom::log {

namespace {

std::atomic<level> current_threshold{level::info};
std::mutex sink_mutex;

constexpr std::string_view level_names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF"};

void write_to_stderr(level lvl, std::string_view line) {
  using clock = std::chrono::system_clock;
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
    clock::now().time_since_epoch()).count();
  const auto seconds_of_day = (now / 1000) % 86400;
  fmt::print(stderr, "[{:02}:{:02}:{:02}.{:03}] {:5} {}\n", seconds_of_day / 3600,
             seconds_of_day / 60 % 60, seconds_of_day % 60, now % 1000,
             level_names[static_cast<int>(lvl)], line);
}

sink& current_sink() {
  static sink s = write_to_stderr;
  return s;
}

} // namespace

level threshold() noexcept { return current_threshold.load(std::memory_order_relaxed); }

void set_threshold(level lvl) noexcept { current_threshold.store(lvl, std::memory_order_relaxed); }

bool parse_level(std::string_view text, level& out) noexcept {
  constexpr std::pair<std::string_view, level> names[] = {
    {"trace", level::trace}, {"debug", level::debug},     {"info", level::info},
    {"warning", level::warning}, {"error", level::error}, {"off", level::off}};
  for (const auto& [name, lvl] : names) {
    if (name == text) {
      out = lvl;
      return true;
    }
  }
  return false;
}

void set_sink(sink s) {
  std::lock_guard guard{sink_mutex};
  current_sink() = s ? std::move(s) : sink{write_to_stderr};
}

void write(level lvl, std::string_view line) {
  std::lock_guard guard{sink_mutex};
  current_sink()(lvl, line);
}

} // namespace strom::log
