#pragma once
// A replica_snapshot as one Cap'n Proto Snapshot message (schema/snapshot.capnp), in flat
// stream form: what snapshot_chunks.hpp splits into bounded chunks and puts back together.

#include <cstddef>
#include <span>

#include <capnp/common.h>
#include <kj/array.h>

#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"

namespace strom::compute {

/// The snapshot as a flat single-segment message (stream header word, then the segment).
kj::Array<capnp::word> encode_snapshot(const replica_snapshot& snapshot);

/// Reads an encoded snapshot back; refuses a corrupt message, another format version or
/// buffers that are not whole floats, with a clear error.
result<replica_snapshot> decode_snapshot(std::span<const capnp::word> words);

/// Most bytes an encoded snapshot of `receiver`'s model can take, with sharing state and
/// `origins` origin clocks: what a receiver accepts as a snapshot's declared size.
std::size_t snapshot_bytes_bound(const replica& receiver, std::size_t origins);

} // namespace strom::compute
