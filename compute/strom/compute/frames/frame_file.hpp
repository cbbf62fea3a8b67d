#pragma once
// Frames on disk: the exact bytes of frame::bytes(), for debugging (`strom frame inspect`),
// regression corpora and captured traffic.

#include <filesystem>

#include "strom/compute/frames/frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Writes `f`'s bytes to `path`, replacing the file.
result<void> write_frame_file(const std::filesystem::path& path, const frame& f);

/// Reads a frame from `path`, refusing files over max_frame_bytes before reading them.
result<frame> read_frame_file(const std::filesystem::path& path);

} // namespace strom::compute
