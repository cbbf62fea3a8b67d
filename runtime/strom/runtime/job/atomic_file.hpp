#pragma once
// Writing a file so that a crash mid-write never leaves a torn one: the bytes go to PATH.partial,
// are flushed to disk, and the temporary file is renamed over PATH.

#include <cstddef>
#include <span>
#include <string>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// Replaces `path` with `bytes` (creating its folder); `what` names the file in errors
/// ("checkpoint", "scheduler state").
result<void> write_file_atomically(const std::string& path, std::span<const std::byte> bytes,
                                   const char* what);

} // namespace strom::runtime
