#pragma once
// Reads a data file into memory, its size checked before anything is read: the raw bytes
// (for readers that learn the content's size from a header, see data_content.hpp), or the
// whole content, gunzipped when it is gzip-compressed, within a bound the caller names.

#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::compute {

/// The most bytes a data file may hold, compressed or not: 20 times Fashion-MNIST's training
/// images (47 MB), the largest file strom reads whole; its features as floats take up to 4
/// times as much again. It bounds what a corrupt or hostile file can make us allocate.
inline constexpr std::uint64_t max_data_file_bytes = std::uint64_t{1} << 30;

/// The bytes of `path` as stored; refuses a file larger than `limit` before reading it.
result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path,
                                                  std::uint64_t limit = max_data_file_bytes);

/// The content of `file_bytes` read from `name`: as they are or, when they start with the gzip
/// magic 1f 8b, decompressed (concatenated gzip members are joined). Decompression stops
/// with an error as soon as the content would exceed `limit` bytes; the output grows as data
/// arrives, never on the trailer's word alone. Errors name `name` and, for a corrupt stream,
/// the decompressed and compressed offsets.
result<std::vector<std::uint8_t>> decompressed_contents(const std::string& name,
                                                        std::vector<std::uint8_t> file_bytes,
                                                        std::uint64_t limit = max_data_file_bytes);

/// read_file_bytes then decompressed_contents.
result<std::vector<std::uint8_t>> read_file_contents(const std::string& path,
                                                     std::uint64_t limit = max_data_file_bytes);

} // namespace strom::compute
