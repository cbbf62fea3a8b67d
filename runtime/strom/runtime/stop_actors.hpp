#pragma once
// Stopping a group of actors from outside any actor (a destructor of the embedding API):
// CAF's ~actor_system waits for every actor, so a host that tears down strom's part must see
// those actors gone, but a wait without bound would hang the host on one stuck actor.

#include <chrono>
#include <cstdint>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace strom::runtime {

/// Sends each actor an exit (user_shutdown), in order, and waits until all have quit or
/// `wait` has passed; returns how many had not quit by then.
std::uint32_t stop_actors(caf::actor_system& system, const std::vector<caf::actor>& actors,
                          std::chrono::seconds wait);

} // namespace strom::runtime
