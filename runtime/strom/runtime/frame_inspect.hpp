#pragma once
// `strom frame inspect FILE`: what a frame on disk holds, for debugging captured traffic and
// the fuzz corpus.

#include <cstddef>
#include <cstdio>
#include <string>

namespace strom::runtime {

/// Slices longer than this are described without decoding the payload into a scratch buffer
/// (64 Mi elements, a 256 MiB scratch): enough for any slice of a model that fits one node,
/// and a forged element count cannot make the inspector allocate more.
inline constexpr std::size_t max_inspect_elements = std::size_t{1} << 26;

/// Reads the update frame in `path` and prints its header fields and payload statistics
/// (encoding, element count, values carried and density, threshold, payload and frame bytes,
/// size relative to dense fp32) to `out`. Returns 0; or prints to `err` a line naming the file
/// and the problem and returns 1.
int inspect_frame_file(const std::string& path, std::FILE* out, std::FILE* err);

} // namespace strom::runtime
