#pragma once
// Trainer snapshots in chunks: a trainer sends its snapshot's chunks to a receiver and
// answers its requester with snapshot_sent; a node agent hands the assembled snapshot to its
// own trainers (compute/snapshots/snapshot_chunks.hpp).

#include <cstdint>

#include <caf/meta/type_name.hpp>

#include "strom/actors/protocol/frame_inspection.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

/// One piece of a trainer's snapshot (compute/snapshots/snapshot_chunks.hpp): a SnapshotChunk
/// frame of at most compute::max_snapshot_chunk_bytes, carried like shared_frame.
struct snapshot_chunk {
  compute::frame value;  ///< the frame (stream header word + one segment)
};

template <class F>
typename F::result_type inspect(F& f, snapshot_chunk& x) {
  return detail::inspect_frame(f, "snapshot_chunk", x.value, compute::max_snapshot_chunk_bytes);
}

/// A whole encoded snapshot, assembled from its chunks: a node agent hands it to its own
/// trainers (a local message; a remote one could carry at most compute::max_frame_bytes).
struct assembled_snapshot {
  compute::frame value;  ///< the encoded words
};

template <class F>
typename F::result_type inspect(F& f, assembled_snapshot& x) {
  return detail::inspect_frame(f, "assembled_snapshot", x.value, compute::max_frame_bytes);
}

/// trainer -> the requester of (snapshot_atom, receiver): the chunks went to the receiver.
struct snapshot_sent {
  std::uint64_t snapshot_id = 0;
  std::uint32_t chunks = 0;
  std::uint64_t bytes = 0;  ///< of the encoded snapshot
};

template <class F>
typename F::result_type inspect(F& f, snapshot_sent& x) {
  return f(caf::meta::type_name("snapshot_sent"), x.snapshot_id, x.chunks, x.bytes);
}

} // namespace strom::actors
