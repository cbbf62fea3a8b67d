#include "strom/actors/pipeline/stage_snapshots.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strom::actors {

std::uint32_t holder_of(std::uint32_t slot, std::uint32_t stages) {
  const auto stage = slot % stages;
  return slot - stage + (stage + 1 < stages ? stage + 1 : stage - 1);
}

void stage_snapshots::keep_own(own_stage_snapshot taken) {
  if (own_.size() == own_kept)
    own_.pop_front();
  own_.push_back(std::move(taken));
}

const own_stage_snapshot* stage_snapshots::own(const stage_point& at) const {
  for (const auto& kept : own_)
    if (kept.note.at == at)
      return &kept;
  return nullptr;
}

stage_snapshots::incoming_entry stage_snapshots::incoming(const incoming_key& key) {
  if (auto found = incoming_.find(key); found != incoming_.end())
    return found;
  if (incoming_.size() >= incoming_kept) {
    // Room for it: the oldest nobody awaits goes, or else the oldest awaited, whose waiter
    // hears why.
    const auto before = [](const auto& a, const auto& b) {
      const bool a_awaited = static_cast<bool>(a.second.waiter);
      const bool b_awaited = static_cast<bool>(b.second.waiter);
      return a_awaited != b_awaited ? !a_awaited : a.second.started < b.second.started;
    };
    const auto oldest = std::min_element(incoming_.begin(), incoming_.end(), before);
    settle(oldest, error{fmt::format("snapshot {}: dropped for newer ones ({} at most are "
                                     "assembled at once)", oldest->first.second,
                                     incoming_kept)});
  }
  return incoming_.emplace(key, incoming_snapshot{compute::snapshot_assembler{max_bytes_}, {},
                                                  ++started_})
    .first;
}

void stage_snapshots::settle(incoming_entry entry, result<compute::frame> outcome) {
  auto waiter = std::move(entry->second.waiter);
  incoming_.erase(entry);
  if (waiter)  // called last: it may add or take snapshots itself
    waiter(std::move(outcome));
}

result<void> stage_snapshots::add_chunk(const caf::actor_addr& sender,
                                        const compute::frame& chunk) {
  auto id = compute::snapshot_id_of(chunk);
  if (!id)
    return id.err();
  const auto entry = incoming({sender, *id});
  auto added = entry->second.chunks.add(chunk);
  if (!added)
    settle(entry, added.err());
  else if (entry->second.chunks.complete() && entry->second.waiter)
    settle(entry, compute::take_assembled(std::move(entry->second.chunks)));
  return added;
}

bool stage_snapshots::when_whole(const caf::actor_addr& sender, std::uint64_t id,
                                 snapshot_waiter then) {
  const auto entry = incoming({sender, id});
  entry->second.waiter = std::move(then);
  if (!entry->second.chunks.complete())
    return true;
  settle(entry, compute::take_assembled(std::move(entry->second.chunks)));
  return false;
}

void stage_snapshots::give_up(const caf::actor_addr& sender, std::uint64_t id) {
  auto entry = incoming_.find({sender, id});
  if (entry == incoming_.end() || !entry->second.waiter)
    return;
  const auto& chunks = entry->second.chunks;
  settle(entry, error{chunks.chunk_count() == 0
                        ? fmt::format("snapshot {}: no chunk of it arrived", id)
                        : fmt::format("snapshot {}: {} of its {} chunks arrived", id,
                                      chunks.chunks_taken(), chunks.chunk_count())});
}

void stage_snapshots::hold(const stage_snapshot_note& note, compute::frame encoded) {
  auto& copies = held_[note.stage];
  if (copies.size() == held_kept)
    copies.pop_front();
  copies.push_back({note.at, std::move(encoded)});
}

const compute::frame* stage_snapshots::held(std::uint32_t stage, const stage_point& at) const {
  auto found = held_.find(stage);
  if (found == held_.end())
    return nullptr;
  for (const auto& copy : found->second)
    if (copy.at == at)
      return &copy.encoded;
  return nullptr;
}

} // namespace strom::actors
