#pragma once
// The network side of a mesh for a node agent: its job's relay published on a guarded port
// of the node's advertised address, and connections to a neighbour's published relay. Both
// go through link guards (transport/), never through CAF's own listening middleman.

#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "strom/actors/cluster/node_agent.hpp"
#include "strom/runtime/security/tls_context.hpp"

namespace strom::runtime {

/// Publishes a relay on a free port of `host` (the node's advertised address), reachable as
/// HOST:PORT; `system` must outlive the published ports. With `tls` the port speaks TLS and
/// admits node certificates only.
actors::relay_publisher relay_publisher_on(caf::actor_system& system, std::string host,
                                           std::shared_ptr<const tls_context> tls);

/// Connects to a published relay with the default connect timeout, over TLS with `tls`;
/// errors name HOST:PORT.
actors::relay_connector relay_connector_of(caf::actor_system& system,
                                           std::shared_ptr<const tls_context> tls);

} // namespace strom::runtime
