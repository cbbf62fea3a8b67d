#pragma once
// Reads a whole data file into memory, gunzipping it when it is gzip-compressed, so that
// the format readers parse one contiguous buffer with plain pointer arithmetic.

#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::compute {

/// The most bytes a data file may hold after decompression: far above any dataset strom
/// reads whole into memory (Fashion-MNIST's training images are 47 MB), it bounds what a
/// corrupt or hostile gzip stream can make us allocate.
inline constexpr std::uint64_t max_file_contents = std::uint64_t{1} << 32;

/// The content of `path`; when it starts with the gzip magic 1f 8b, the decompressed content
/// (concatenated gzip members are joined). Errors name the path and, for a corrupt stream,
/// the decompressed and compressed offsets.
result<std::vector<std::uint8_t>> read_file_contents(const std::string& path);

} // namespace strom::compute
