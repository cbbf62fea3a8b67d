#pragma once
// The log's lines, collected while an object lives, for tests that check what a refusal says.

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strom/log.hpp"

namespace strom::test {

/// Whether `probe` holds within 2 s, asked every 20 ms.
template <class Probe>
bool within_2_s(Probe probe) {
  for (int tries = 0; tries < 100; ++tries) {
    if (probe())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return probe();
}

/// Collects the log's lines while it lives.
struct log_lines {
  log_lines() {
    strom::log::set_sink([this](strom::log::level, std::string_view line) {
      std::lock_guard<std::mutex> lock{mutex};
      lines.emplace_back(line);
    });
  }
  ~log_lines() { strom::log::set_sink({}); }

  /// Waits up to 2 s for a line holding all of `parts`.
  bool has(const std::vector<std::string>& parts) {
    return within_2_s([&] {
      std::lock_guard<std::mutex> lock{mutex};
      return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
        return std::all_of(parts.begin(), parts.end(), [&](const std::string& part) {
          return line.find(part) != std::string::npos;
        });
      });
    });
  }

  std::mutex mutex;
  std::vector<std::string> lines;
};

} // namespace strom::test
