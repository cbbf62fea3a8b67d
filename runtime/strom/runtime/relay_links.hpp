#pragma once
// The network side of a mesh for a node agent: its job's relay published on a guarded port
// of the node's advertised address, and connections to a neighbour's published relay. Both
// go through link guards (transport/), never through CAF's own listening middleman.

#include <string>

#include <caf/fwd.hpp>

#include "strom/actors/node_agent.hpp"

namespace strom::runtime {

/// Publishes a relay on a free port of `host` (the node's advertised address), reachable as
/// HOST:PORT; `system` must outlive the published ports.
actors::relay_publisher relay_publisher_on(caf::actor_system& system, std::string host);

/// Connects to a published relay with the default connect timeout; errors name HOST:PORT.
actors::relay_connector relay_connector_of(caf::actor_system& system);

} // namespace strom::runtime
