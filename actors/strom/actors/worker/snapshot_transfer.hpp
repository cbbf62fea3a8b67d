#pragma once
// Snapshots between actors: sending an encoded snapshot as snapshot_chunk messages (bounded in
// size, see compute/snapshots/snapshot_chunks.hpp), what a trainer does for a joining node and
// a job's checkpoint keeper for a job resumed after the scheduler's restart; and receiving
// one, what a joining node's agent and a checkpoint keeper do.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <capnp/common.h>
#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

/// Sends `encoded` to `receiver` in chunks of snapshot `id`; the error (snapshot_failed)
/// starts with `sender`, which names who could not send.
caf::result<snapshot_sent> send_in_chunks(const caf::actor& receiver,
                                          std::span<const capnp::word> encoded, std::uint64_t id,
                                          const std::string& sender);

/// A snapshot being received: its chunks, the request it answers, and the actor sending it.
/// The receiver monitors the sender: a request to a node that dies is never answered, so its
/// down message must end the wait (give_up_if_from).
struct snapshot_receipt {
  compute::snapshot_assembler incoming;
  caf::response_promise promise;
  caf::actor_addr source;
};

/// The receipt awaited from `source`, taken out of `receipt` and `source` no longer monitored
/// by `self`; nothing when it was given up meanwhile (its source went away) or replaced.
std::optional<snapshot_receipt> settle(caf::local_actor* self,
                                       std::optional<snapshot_receipt>& receipt,
                                       const caf::actor& source);

/// Answers `receipt`'s request with `why` and drops it when `down` is its source's; true then.
bool give_up_if_from(std::optional<snapshot_receipt>& receipt, const caf::down_msg& down,
                     caf::error why);

} // namespace strom::actors
