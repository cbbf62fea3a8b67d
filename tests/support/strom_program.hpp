#pragma once
// Runs the real `strom` program of the build with arguments, as a shell would, and keeps
// its exit status and its output (stdout and stderr together).

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <boost/test/unit_test.hpp>

namespace strom::test {

struct outcome {
  int status = -1;     ///< exit status; -1 when a signal ended it
  std::string output;  ///< stdout and stderr together
};

/// Runs `command` as a shell would, stdout and stderr together.
inline outcome run_command(const std::string& command) {
  outcome result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  while (auto n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    result.output.append(buffer.data(), n);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

inline outcome run_strom(const std::string& arguments) {
  return run_command(std::string{STROM_BINARY_DIR} + "/runtime/strom " + arguments);
}

} // namespace strom::test
