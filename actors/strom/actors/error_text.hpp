#pragma once
// The readable text of an error that may have crossed the network: strom's actors put their
// message into the error's context; CAF's own errors are rendered by the actor system.

#include <string>

#include <caf/actor_system.hpp>
#include <caf/error.hpp>

namespace strom::actors {

/// An error carrying `message` (the receiver gets it back through error_text).
caf::error make_failure(std::string message);

/// The message of an error made by make_failure, else the system's rendering.
std::string error_text(caf::actor_system& system, const caf::error& err);

} // namespace strom::actors
