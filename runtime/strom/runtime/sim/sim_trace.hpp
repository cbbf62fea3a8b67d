#pragma once
// The event trace of a simulation: one JSON object a line, hashed as it is written (SHA-256
// of every line and its newline), and written to a file when asked (--trace-out). The same
// scenario and seed give the same lines, so the hash tells two runs apart.

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "strom/compute/result.hpp"

namespace strom::runtime::sim {

class sim_trace {
public:
  /// A trace that is only hashed.
  sim_trace();
  ~sim_trace();
  sim_trace(const sim_trace&) = delete;
  sim_trace& operator=(const sim_trace&) = delete;

  /// A trace written to `path` as well; the error names the path.
  static result<std::unique_ptr<sim_trace>> to_file(const std::string& path);

  /// Adds one line (a JSON object, without the newline).
  void add(std::string_view line);

  /// Lines added so far.
  std::uint64_t lines() const noexcept { return lines_; }

  /// The SHA-256 of everything added, in hex; ends the trace (flushes and closes its file).
  /// The error names the file when writing it failed.
  result<std::string> finish();

private:
  struct hasher;
  std::unique_ptr<hasher> hash_;
  std::FILE* file_ = nullptr;
  std::string path_;
  std::uint64_t lines_ = 0;
  bool write_failed_ = false;
};

} // namespace strom::runtime::sim
