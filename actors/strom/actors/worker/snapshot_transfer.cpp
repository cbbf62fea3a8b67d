#include "strom/actors/worker/snapshot_transfer.hpp"

#include "strom/actors/errors.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

caf::result<snapshot_sent> send_in_chunks(const caf::actor& receiver,
                                          std::span<const capnp::word> encoded, std::uint64_t id,
                                          const std::string& sender) {
  auto chunks = compute::chunk_snapshot(encoded, id);
  if (!chunks)
    return make_error(strom_error::snapshot_failed, sender + ": " + chunks.err().message);
  // Sent anonymously: a remote message's sender is registered for replies, and a detached
  // actor (a trainer) so held keeps its actor system from shutting down.
  for (auto& chunk : *chunks)
    caf::anon_send(receiver, snapshot_chunk{std::move(chunk)});
  return snapshot_sent{id, static_cast<std::uint32_t>(chunks->size()), encoded.size_bytes()};
}

std::optional<snapshot_receipt> settle(caf::local_actor* self,
                                       std::optional<snapshot_receipt>& receipt,
                                       const caf::actor& source) {
  if (!receipt || receipt->source != source.address())
    return std::nullopt;
  self->demonitor(source);
  auto settled = std::move(receipt);
  receipt.reset();
  return settled;
}

bool give_up_if_from(std::optional<snapshot_receipt>& receipt, const caf::down_msg& down,
                     caf::error why) {
  if (!receipt || receipt->source != down.source)
    return false;
  receipt->promise.deliver(std::move(why));
  receipt.reset();
  return true;
}

} // namespace strom::actors
