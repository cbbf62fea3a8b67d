#pragma once
// A subnet's snapshots (issue #20, stage restore; LightDNN's snapshots of a subnet): its own,
// which it rolls back to when another stage is lost, and the copies of a neighbouring stage's
// that it holds so that stage can be re-spawned on another node. A stage's copy goes to its
// holder (holder_of) as snapshot chunks followed by a stage_snapshot_note; a restore's or a
// gathering's snapshot as chunks followed by the answer snapshot_sent. The chunks of each sender
// and snapshot id are assembled apart, in any order, and the note or answer may come before the
// last of them (a route between two nodes changes when they connect directly): whoever awaits a
// snapshot is called once it is whole (when_whole), or given up on after a timeout (give_up).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
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
  /// Whether any own snapshot is kept.
  bool keeps_own() const noexcept { return !own_.empty(); }
  /// The own snapshot taken at `at`; null when it is no longer (or never was) kept.
  const own_stage_snapshot* own(const stage_point& at) const;

  /// Snapshots being assembled at once; the oldest that nobody awaits goes first beyond it
  /// (a sender that stopped mid-snapshot leaves no memory behind for long).
  static constexpr std::size_t incoming_kept = 4;

  /// What gets an awaited snapshot: encoded, or why it did not arrive whole.
  using snapshot_waiter = std::function<void(result<compute::frame>)>;

  /// Adds a chunk of a snapshot `sender` is sending; the waiter of the snapshot it completes
  /// (or makes fail) is called.
  result<void> add_chunk(const caf::actor_addr& sender, const compute::frame& chunk);
  /// Calls `then` with snapshot `id` of `sender` once it is whole: at once when it is, else
  /// at its last chunk or give_up. True when it waits.
  bool when_whole(const caf::actor_addr& sender, std::uint64_t id, snapshot_waiter then);
  /// Ends the wait for `sender`'s snapshot `id`, if still on, with an error saying how many of
  /// its chunks arrived.
  void give_up(const caf::actor_addr& sender, std::uint64_t id);
  /// Keeps `encoded` as the copy of note.stage's snapshot taken at note.at.
  void hold(const stage_snapshot_note& note, compute::frame encoded);
  /// The encoded snapshot of `stage` taken at `at`; null when none is held.
  const compute::frame* held(std::uint32_t stage, const stage_point& at) const;

private:
  struct held_copy {
    stage_point at;
    compute::frame encoded;
  };
  struct incoming_snapshot {
    compute::snapshot_assembler chunks;
    snapshot_waiter waiter;      // empty until someone awaits it
    std::uint64_t started = 0;   // order of the first chunk or wait
  };
  using incoming_key = std::pair<caf::actor_addr, std::uint64_t>;  // sender, snapshot id
  using incoming_entry = std::map<incoming_key, incoming_snapshot>::iterator;

  /// The entry of `key`, made (making room) when there is none.
  incoming_entry incoming(const incoming_key& key);
  /// Calls the entry's waiter, if any, with `outcome` and drops the entry.
  void settle(incoming_entry entry, result<compute::frame> outcome);

  std::size_t max_bytes_;
  std::deque<own_stage_snapshot> own_;
  std::map<incoming_key, incoming_snapshot> incoming_;
  std::uint64_t started_ = 0;
  std::map<std::uint32_t, std::deque<held_copy>> held_;  // by stage
};

} // namespace strom::actors
