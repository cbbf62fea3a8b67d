#pragma once
// An encoded snapshot (snapshot_encoding.hpp) as a sequence of SnapshotChunk frames
// (schema/snapshot.capnp), each at most max_snapshot_chunk_bytes: CAF 0.17 serialises every
// outbound message on the node's single middleman thread, so one message of a 100 MB model
// would hold back that node's heartbeats and frames for as long as it takes to write
// (shared/CAF-0.17-NOTES.md). The assembler takes a peer's chunks in any order (a route between
// two nodes can change mid-snapshot when they connect directly, and a chunk may overtake the
// ones before it), ignores a chunk it has already, and never allocates more than the snapshot
// size the receiver's own model allows.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <capnp/common.h>

#include "strom/compute/frames/frame.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// Largest snapshot chunk frame: 4 MiB, about 4 ms of a 10 Gbit/s link, so a heartbeat
/// queued behind a chunk waits milliseconds, far below any heartbeat timeout (>= 500 ms).
inline constexpr std::size_t max_snapshot_chunk_bytes = std::size_t{4} << 20;

/// Room in a chunk frame besides its payload: stream header, root pointer and the
/// SnapshotChunk struct (a few words), rounded up generously.
inline constexpr std::size_t snapshot_chunk_overhead_bytes = 256;

/// Most payload bytes a chunk may carry (a whole number of words).
inline constexpr std::size_t max_snapshot_chunk_payload_bytes =
  max_snapshot_chunk_bytes - snapshot_chunk_overhead_bytes;

/// Payload bytes of every chunk but the last as sent: 1 MiB. Each hop between two nodes (the
/// receiving link guard, the middleman, a routing scheduler) holds a whole message before it
/// passes it on, so smaller chunks overlap across the hops: a restore's 8.6 MB snapshot took
/// 0.41-0.44 s from request to restore in 4 MiB chunks and 0.30-0.31 s in 1 MiB chunks.
inline constexpr std::size_t snapshot_chunk_payload_bytes =
  (std::size_t{1} << 20) - snapshot_chunk_overhead_bytes;

/// Splits `encoded` into chunk frames of at most `payload_bytes` payload each (a positive
/// multiple of 8, at most max_snapshot_chunk_payload_bytes); the last one carries the CRC-32 of
/// all of `encoded`.
result<std::vector<frame>> chunk_snapshot(std::span<const capnp::word> encoded,
                                          std::uint64_t snapshot_id,
                                          std::size_t payload_bytes = snapshot_chunk_payload_bytes);

/// The snapshot id a chunk frame names; an error when the frame is no chunk.
result<std::uint64_t> snapshot_id_of(const frame& chunk);

/// Puts one snapshot's chunks back together, in whatever order they arrive.
class snapshot_assembler {
public:
  /// Accepts a snapshot of at most `max_total_bytes` (snapshot_bytes_bound of the receiver).
  explicit snapshot_assembler(std::size_t max_total_bytes) : max_total_bytes_(max_total_bytes) {}

  /// Takes a chunk. The first one fixes snapshot id, count and total, which are checked against
  /// their bounds before the total is allocated; later ones must match them, and every chunk
  /// but the last must carry as many bytes as the others. A chunk taken already is ignored (a
  /// retransmission). After an error the assembler refuses everything.
  result<void> add(const frame& chunk);

  /// True once every chunk arrived and the CRC-32 of the whole matched.
  bool complete() const noexcept { return complete_; }

  /// Chunks taken so far, and the count the first one declared (0 before it).
  std::uint32_t chunks_taken() const noexcept { return taken_; }
  std::uint32_t chunk_count() const noexcept { return count_; }

  /// The encoded snapshot (empty until complete()).
  std::span<const capnp::word> encoded() const noexcept;

private:
  result<void> take(const frame& chunk);
  /// Where chunk `index`'s `bytes` of payload go; an error when they cannot be part of the
  /// declared total (fixes the size of the equal chunks at the first that shows it).
  result<std::size_t> offset_of(std::uint32_t index, std::size_t bytes);

  std::size_t max_total_bytes_;
  std::uint64_t snapshot_id_ = 0;
  std::uint32_t count_ = 0;         // 0 until the first chunk arrived
  std::uint32_t taken_ = 0;         // distinct chunks taken
  std::size_t total_bytes_ = 0;
  std::size_t chunk_bytes_ = 0;     // payload of every chunk but the last; 0 until known
  std::optional<std::uint32_t> crc_;  // the whole snapshot's, from the last chunk
  std::vector<bool> arrived_;       // by chunk index
  std::unique_ptr<capnp::word[]> words_;
  bool complete_ = false;
  std::optional<error> failed_;
};

/// The encoded snapshot of a complete assembler as a frame (the assembler's storage moves into
/// it, nothing is copied); an error when its chunks did not arrive whole.
result<frame> take_assembled(snapshot_assembler&& done);

} // namespace strom::compute
