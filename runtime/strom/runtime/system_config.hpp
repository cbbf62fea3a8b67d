#pragma once
// The CAF configuration every strom actor system uses: strom's message types, and for nodes
// that talk to others the network layer (CAF's middleman) with connection heartbeats.

#include <cstddef>

#include <caf/actor_system_config.hpp>

namespace strom::runtime {

/// Prepares a host program's configuration for strom: registers the message types and loads
/// the middleman. Call it before creating the host's actor_system.
void configure_for_strom(caf::actor_system_config& config);

/// A configuration for one of strom's own actor systems.
class system_config : public caf::actor_system_config {
public:
  /// `networked`: load the middleman. `threads`: CAF scheduler threads for the event-based
  /// actors (trainers are detached and have their own).
  explicit system_config(bool networked, std::size_t threads = 1);
};

} // namespace strom::runtime
