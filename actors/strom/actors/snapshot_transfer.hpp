#pragma once
// Sending an encoded snapshot to a receiver as snapshot_chunk messages (bounded in size, see
// compute/snapshots/snapshot_chunks.hpp): what a trainer does for a joining node and what a
// job's checkpoint keeper does for a job resumed after the scheduler's restart.

#include <cstdint>
#include <span>
#include <string>

#include <capnp/common.h>
#include <caf/all.hpp>

#include "strom/actors/messages.hpp"

namespace strom::actors {

/// Sends `encoded` to `receiver` in chunks of snapshot `id`; the error (snapshot_failed)
/// starts with `sender`, which names who could not send.
caf::result<snapshot_sent> send_in_chunks(const caf::actor& receiver,
                                          std::span<const capnp::word> encoded, std::uint64_t id,
                                          const std::string& sender);

} // namespace strom::actors
