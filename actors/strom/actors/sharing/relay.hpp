#pragma once
// The relay: a node's gradient-sharing transport. Every update frame a node sees passes
// through it once: frames that fail to read are counted and dropped, duplicates (same origin
// and sequence, e.g. arriving over two mesh paths or resent after a restore) are counted and
// dropped, and each new frame goes to every local subscriber (the trainers, which apply it)
// and every peer relay except the one it came from. A frame a local trainer publishes goes
// to the peers only: the trainer gave it to its siblings itself. Drain markers travel the
// same way (so each stays behind its origin's frames on every path), once per origin and
// epoch.
//
// Mesh repair. A relay with a mesh edge keeps the frames and drain markers it passed in the
// current round, in the order it passed them (bounded by one round: a newer round's first
// frame or marker clears them). Along a tree, an origin's frames reach a node in the order
// they were sent, so every node holds a prefix of each origin's round. When a node is lost,
// the relays of the edges that replace it send each other what they kept (resend): each
// side then has what the other side had, including the lost node's frames and the live
// nodes' frames and markers the lost relay swallowed; de-duplication drops the rest. The
// kept frames go before anything new on that edge, so markers stay behind their frames.
//
// Parameter averaging. The relay also reduces its node's averages along the tree the
// job_master sends it (average_reduction.hpp): its node's sum comes from the trainer that
// completed it, partial sums from its children, totals from its parent (or, after a repair,
// from any neighbour); what the reduction asks for goes to the parent, the trainers and the
// neighbours. A new edge gets the last totals the relay took.
// A lost peer is forgotten by sender: what it still sends is dropped, while its origin's
// frames that reach a relay from survivors pass (they were counted by the survivor that
// took them from the lost relay before it forgot it).

#include <cstdint>
#include <unordered_map>
#include <variant>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/averaging/average_reduction.hpp"
#include "strom/actors/messages.hpp"
#include "strom/actors/protocol/roles.hpp"
#include "strom/actors/worker/timeline.hpp"
#include "strom/actors/sharing/seen_updates.hpp"

namespace strom::actors {

/// A frame or drain marker a relay passed in the current round, kept for a mesh repair.
struct kept_message {
  std::variant<shared_frame, drain_marker> message;
};

/// A relay's state.
struct relay_state {
  std::vector<frame_sink_actor> subscribers;  ///< local trainers
  std::vector<relay_peer_actor> peers;  ///< relays of other nodes (the topology's edges)
  relay_peer_actor parent;  ///< of the peers, the mesh parent's (added by this node's agent)
  seen_updates seen;                    ///< de-duplication keys
  std::unordered_map<std::uint64_t, std::uint32_t> drained;  ///< per origin: rounds marked
  std::unordered_map<std::uint64_t, origin_frames> counted;  ///< per origin: its latest round
  std::vector<caf::actor_addr> forgotten;  ///< lost peers whose messages are dropped
  bool keeps_round = false;  ///< has a mesh edge: keeps the round's frames for repairs
  std::uint32_t kept_round = 0;  ///< the round `kept` holds
  std::vector<kept_message> kept;  ///< passed this round, in order
  average_reduction averages;      ///< the node's share of reducing parameter averages
  relay_stats stats;

  std::shared_ptr<timeline_track> track;  ///< its traffic (--timeline); null: none kept

  static inline const char* name = "strom.relay";
};

/// Handles: shared_frame (validate, de-duplicate, forward to the subscribers and to every
/// peer but the sender); drain_marker (de-duplicate, forward the same way); (publish_atom,
/// shared_frame or drain_marker) from a local trainer (the same, to the peers only);
/// (subscribe_atom, actor) and (add_peer_atom, actor) to connect; (add_peer_atom, actor, resend)
/// adds the mesh parent (the relay keeps its rounds from then on) and, with resend, first sends
/// it what it kept of the round; (wire_atom, actor, resend) -> wired_atom: the same for a mesh
/// child, answered once the peer is added (a mesh child asks its parent); average_tree from the
/// job_master, (publish_atom, average_part) from a local trainer, average_part from a child and
/// average_total from a neighbour (average_reduction.hpp); stats_atom -> relay_stats;
/// (forget_atom, origin, peer) -> origin_frames: the origin's frames counted in its latest
/// round, after which `peer` (its relay, may be null) is no longer sent to and what it still
/// sends is dropped.
caf::behavior relay(caf::stateful_actor<relay_state>* self);

/// A relay that records its traffic on `track` (bytes received, frames forwarded) as it goes.
caf::behavior traced_relay(caf::stateful_actor<relay_state>* self,
                           std::shared_ptr<timeline_track> track);

} // namespace strom::actors
