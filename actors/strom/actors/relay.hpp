#pragma once
// The relay: a node's gradient-sharing transport. Every update frame a node sees passes
// through it once: frames that fail to read are counted and dropped, duplicates (same origin
// and sequence, e.g. arriving over two mesh paths or resent after a restore) are counted and
// dropped, and each new frame goes to every local subscriber (the trainers, which apply it)
// and every peer relay except the one it came from. A frame a local trainer publishes goes
// to the peers only: the trainer gave it to its siblings itself. Drain markers travel the
// same way (so each stays behind its origin's frames on every path), once per origin and
// epoch.

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/seen_updates.hpp"
#include "strom/compute/frames/update_frame.hpp"

namespace strom::actors {

/// A relay's state.
struct relay_state {
  std::vector<caf::actor> subscribers;  ///< local trainers
  std::vector<caf::actor> peers;        ///< relays of other nodes (the topology's edges)
  seen_updates seen;                    ///< de-duplication keys
  std::unordered_map<std::uint64_t, std::uint32_t> drained;  ///< per origin: rounds marked
  std::unordered_map<std::uint64_t, origin_frames> counted;  ///< per origin: its latest round
  std::unordered_set<std::uint64_t> forgotten;  ///< lost origins whose frames are dropped
  compute::frame_workspace workspace;   ///< scratch space for reading LZ4 frames
  relay_stats stats;

  static inline const char* name = "strom.relay";
};

/// Handles: shared_frame (validate, de-duplicate, forward to the subscribers and to every
/// peer but the sender); drain_marker (de-duplicate, forward the same way); (publish_atom,
/// shared_frame or drain_marker) from a local trainer (the same, to the peers only);
/// (subscribe_atom, actor) and (add_peer_atom, actor) to connect; (wire_atom, actor) ->
/// wired_atom: add_peer that answers once the peer is added (a mesh child asks); stats_atom -> relay_stats;
/// (forget_atom, origin, peer) -> origin_frames: the origin's frames counted in its latest
/// round, after which its frames and markers are dropped and `peer` (its relay, may be null)
/// is no longer sent to.
caf::behavior relay(caf::stateful_actor<relay_state>* self);

} // namespace strom::actors
