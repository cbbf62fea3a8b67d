#pragma once
// The client side of submit, attach and status: an actor system of its own, connected to the
// scheduler. The system must outlive every request made through it, hence one object.

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/system_config.hpp"

namespace strom::cli {

/// A client actor system and the scheduler it reached.
struct scheduler_link {
  runtime::system_config config{true};
  caf::actor_system system{config};
  caf::actor scheduler;
};

/// Connects to the scheduler at `to`. On failure prints "COMMAND: CONTEXT: why" (without
/// CONTEXT when it is empty) to stderr and returns null.
std::unique_ptr<scheduler_link> connect_scheduler(const runtime::endpoint& to,
                                                  const char* command,
                                                  const std::string& context);

} // namespace strom::cli
