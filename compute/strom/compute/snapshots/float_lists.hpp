#pragma once
// Flat fp32 buffers as Cap'n Proto List(Data), the way checkpoints and snapshots store them:
// a Data field holds less than 2^29 bytes, so a buffer is split into pieces, and its CRC-32
// (zlib's crc32) is computed on the way.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <capnp/list.h>

#include "strom/compute/result.hpp"

namespace strom::compute {

/// Bytes of one List(Data) piece: 2^28 keeps pieces well inside the 2^29-byte Data limit.
inline constexpr std::size_t float_list_piece_bytes = std::size_t{1} << 28;

/// CRC-32 of `size` bytes continuing from `crc` (zlib's crc32 takes at most a uInt per call).
std::uint32_t crc32_of(std::uint32_t crc, const void* bytes, std::size_t size);

/// Pieces a buffer of `values` floats is stored in.
unsigned float_list_pieces(std::size_t values);

/// Writes `values` into `list` (initialised with float_list_pieces(values.size()) elements);
/// returns the CRC-32 of their bytes.
std::uint32_t write_float_list(capnp::List<capnp::Data>::Builder list,
                               std::span<const float> values);

/// A buffer read back and the CRC-32 of its bytes as read.
struct float_list {
  std::vector<float> values;
  std::uint32_t crc = 0;
};

/// Reads a List(Data) back into floats; refuses a byte count that is not a whole number of
/// floats, naming `where` (e.g. "<path>: checkpoint") and `field`.
result<float_list> read_float_list(capnp::List<capnp::Data>::Reader list, std::string_view field,
                                   std::string_view where);

} // namespace strom::compute
