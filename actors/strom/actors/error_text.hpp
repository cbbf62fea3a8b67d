#pragma once
// The readable text of an error that may have crossed the network: strom's errors (errors.hpp)
// carry their words in the error's context; CAF's own errors are rendered by the actor system.

#include <string>

#include <caf/actor_system.hpp>
#include <caf/error.hpp>

namespace strom::actors {

/// The words of a strom error, else the system's rendering.
std::string error_text(caf::actor_system& system, const caf::error& err);

} // namespace strom::actors
