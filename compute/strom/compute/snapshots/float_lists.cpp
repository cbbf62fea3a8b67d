#include "strom/compute/snapshots/float_lists.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>
#include <zlib.h>

namespace strom::compute {

std::uint32_t crc32_of(std::uint32_t crc, const void* bytes, std::size_t size) {
  const auto* at = static_cast<const Bytef*>(bytes);
  while (size != 0) {
    const auto piece = static_cast<uInt>(std::min<std::size_t>(size, UINT_MAX));
    crc = static_cast<std::uint32_t>(crc32(crc, at, piece));
    at += piece;
    size -= piece;
  }
  return crc;
}

unsigned float_list_pieces(std::size_t values) {
  const std::size_t bytes = values * sizeof(float);
  return static_cast<unsigned>((bytes + float_list_piece_bytes - 1) / float_list_piece_bytes);
}

std::uint32_t write_float_list(capnp::List<capnp::Data>::Builder list,
                               std::span<const float> values) {
  const std::size_t bytes = values.size_bytes();
  const auto* source = reinterpret_cast<const kj::byte*>(values.data());
  for (unsigned i = 0; i < list.size(); ++i) {
    const std::size_t begin = i * float_list_piece_bytes;
    list.set(i, kj::arrayPtr(source + begin, std::min(float_list_piece_bytes, bytes - begin)));
  }
  return crc32_of(0, source, bytes);
}

result<float_list> read_float_list(capnp::List<capnp::Data>::Reader list, std::string_view field,
                                   std::string_view where) {
  // Each access to a piece counts against the traversal limit: read the list once.
  std::vector<capnp::Data::Reader> pieces;
  for (auto piece : list)
    pieces.push_back(piece);
  std::size_t bytes = 0;
  for (auto piece : pieces)
    bytes += piece.size();
  if (bytes % sizeof(float) != 0)
    return error{fmt::format("{} field {} holds {} bytes, not a whole number of floats", where,
                             field, bytes)};
  float_list read;
  read.values.resize(bytes / sizeof(float));
  auto* out = reinterpret_cast<kj::byte*>(read.values.data());
  for (auto piece : pieces) {
    // An empty piece may have no storage at all: memcpy from null is undefined even for 0
    // bytes (found by fuzz_checkpoint).
    if (piece.size() == 0)
      continue;
    std::memcpy(out, piece.begin(), piece.size());
    read.crc = crc32_of(read.crc, piece.begin(), piece.size());
    out += piece.size();
  }
  return read;
}

} // namespace strom::compute
