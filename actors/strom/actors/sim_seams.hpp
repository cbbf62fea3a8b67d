#pragma once
// The two seams through which `strom sim`'s live mode (runtime/sim/live_*) runs the product's
// actors in virtual time: what a node's computation costs, and how a relay reaches a relay of
// another node. Real nodes set neither; the actors then do what they always did.

#include <functional>

#include <caf/actor.hpp>

namespace strom::actors {

/// Told of every step a node's trainers compute and every frame they apply. A live
/// simulation charges them to the node's virtual time (each node its own machine, at its own
/// speed) instead of the time the one process took, so runs are deterministic by seed. A
/// metered node's trainers run on its actor system's scheduler, not on threads of their own:
/// the simulation drives every actor from one thread.
class compute_meter {
public:
  virtual ~compute_meter() = default;
  /// One batch computed: forward, backward, update and the scan of the residual.
  virtual void step_computed() = 0;
  /// One frame of another worker read and applied to a replica.
  virtual void frame_applied() = 0;
};

/// The handle through which this node's actors send to `peer_relay`, a relay of another node
/// (the plain topology's hub, or a node's relay on the hub's side). Empty: the handle itself,
/// which CAF's middleman carries; a simulation returns a shim on the link that applies the
/// link's latency, bandwidth and frame faults.
using relay_reach = std::function<caf::actor(const caf::actor& peer_relay)>;

} // namespace strom::actors
