// Fuzz target: the snapshot chunk assembler (compute/snapshots/snapshot_chunks.hpp) on a
// sequence of chunk frames, each preceded by its length as 4 little-endian bytes, as a peer
// would send them; a completed snapshot is decoded too. Hostile sequences (out of order,
// duplicates, forged totals, flipped bits) must be refused, never crash, and never make the
// assembler allocate past its bound.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strom/compute/frames/frame.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"

namespace {

/// The assembler's bound: 1 MiB, far above the corpus snapshots, far below a forged total.
constexpr std::size_t fuzz_snapshot_bound = std::size_t{1} << 20;
/// Bytes of the length prefix before each chunk.
constexpr std::size_t length_prefix_bytes = 4;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strom::compute::snapshot_assembler assembler{fuzz_snapshot_bound};
  while (size >= length_prefix_bytes) {
    std::uint32_t length = 0;
    std::memcpy(&length, data, length_prefix_bytes);
    data += length_prefix_bytes;
    size -= length_prefix_bytes;
    if (length > size)
      return 0;
    auto chunk = strom::compute::frame::from_bytes(
      {reinterpret_cast<const std::byte*>(data), length});
    data += length;
    size -= length;
    if (!chunk || !assembler.add(*chunk))
      return 0;
  }
  if (assembler.complete())
    (void)strom::compute::decode_snapshot(assembler.encoded());
  return 0;
}
