#pragma once
// A subnet's snapshots (issue #20, stage restore; LightDNN's snapshots of a subnet): its own,
// which it rolls back to when another stage is lost, and the copies of a neighbouring stage's
// that it holds so that stage can be re-spawned on another node. A stage's copy goes to its
// holder (holder_of) as snapshot chunks followed by a stage_snapshot_note; the holder keeps the
// chunks of each sender apart, since a stage may hold two neighbours' copies.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include <caf/actor_addr.hpp>

#include "strom/actors/messages.hpp"
#include "strom/compute/frames/frame.hpp"
#include "strom/compute/result.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"

namespace strom::actors {

/// The stage slot that keeps slot `slot`'s copies, in the same copy of a pipeline of `stages`
/// stages (slot r * stages + s is copy r's stage s): the next stage, and for the last stage
/// the one before it.
std::uint32_t holder_of(std::uint32_t slot, std::uint32_t stages);

/// A stage's own snapshot and where it was taken (shared with the copy sent in the background).
struct own_stage_snapshot {
  stage_snapshot_note note;
  std::shared_ptr<const compute::replica_snapshot> saved;
};

/// One subnet's own snapshots and the copies it holds.
class stage_snapshots {
public:
  /// Own snapshots kept: a restore goes back to the latest that every stage's holder has,
  /// which at worst is two behind a stage's newest.
  static constexpr std::size_t own_kept = 3;
  /// Copies kept of each stage held.
  static constexpr std::size_t held_kept = 2;

  /// Copies of at most `max_bytes` each are accepted (the whole network's state bounds them).
  explicit stage_snapshots(std::size_t max_bytes = 0) : max_bytes_(max_bytes) {}

  /// Keeps `taken`; the oldest goes once own_kept are kept.
  void keep_own(own_stage_snapshot taken);
  /// The own snapshot taken at `at`; null when it is no longer (or never was) kept.
  const own_stage_snapshot* own(const stage_point& at) const;

  /// Adds a chunk of the snapshot `sender` is sending (the first chunk starts a new one).
  result<void> add_chunk(const caf::actor_addr& sender, const compute::frame& chunk);
  /// The chunks `sender` sent are the snapshot `note` describes: complete, it is kept as
  /// a copy of note.stage's.
  result<void> hold(const caf::actor_addr& sender, const stage_snapshot_note& note);
  /// The encoded snapshot of `stage` taken at `at`; null when none is held.
  const compute::frame* held(std::uint32_t stage, const stage_point& at) const;
  /// Takes the encoded snapshot `sender` sent, once complete (a restore's fetch).
  result<compute::frame> take_received(const caf::actor_addr& sender);

private:
  struct held_copy {
    stage_point at;
    compute::frame encoded;
  };

  std::size_t max_bytes_;
  std::deque<own_stage_snapshot> own_;
  std::map<caf::actor_addr, compute::snapshot_assembler> incoming_;
  std::map<std::uint32_t, std::deque<held_copy>> held_;  // by stage
};

} // namespace strom::actors
