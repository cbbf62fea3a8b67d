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

result<void> stage_snapshots::add_chunk(const caf::actor_addr& sender,
                                        const compute::frame& chunk) {
  auto found = incoming_.find(sender);
  // A complete (or refused) assembly from this sender was never claimed: a new one begins.
  if (found == incoming_.end() || found->second.complete())
    found = incoming_.insert_or_assign(sender, compute::snapshot_assembler{max_bytes_}).first;
  return found->second.add(chunk);
}

result<compute::frame> stage_snapshots::take_received(const caf::actor_addr& sender) {
  auto found = incoming_.find(sender);
  if (found == incoming_.end())
    return error{"no snapshot chunks arrived"};
  auto assembled = compute::take_assembled(std::move(found->second));
  incoming_.erase(found);
  return assembled;
}

result<void> stage_snapshots::hold(const caf::actor_addr& sender,
                                   const stage_snapshot_note& note) {
  auto encoded = take_received(sender);
  if (!encoded)
    return error{fmt::format("the snapshot of stage {} at epoch {} step {}: {}", note.stage + 1,
                             note.at.epoch + 1, note.at.epoch_step, encoded.err().message)};
  auto& copies = held_[note.stage];
  if (copies.size() == held_kept)
    copies.pop_front();
  copies.push_back({note.at, std::move(*encoded)});
  return success();
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
