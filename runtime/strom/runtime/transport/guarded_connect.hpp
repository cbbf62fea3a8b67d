#pragma once
// The client side of a guarded link: connects to a published actor with one deadline for the
// TCP connection and the handshake together, honours an interruption at every moment, checks
// what the other side sends like a server's guard does, and says in words what is at the
// other end when it is not a strom peer ("127.0.0.1:8080 answered, but it is not a strom
// scheduler"). CAF's own remote_actor waits forever for a handshake and reports raw codes.

#include <chrono>
#include <functional>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/transport/link_guard.hpp"

namespace strom::runtime {

/// The default of --connect-timeout: connection and handshake together.
inline constexpr std::chrono::milliseconds default_connect_timeout = std::chrono::seconds(10);

/// How a client connects.
struct connect_options {
  std::chrono::milliseconds timeout = default_connect_timeout;
  /// Asked every few milliseconds while waiting; true gives up at once ("interrupted").
  std::function<bool()> interrupted;
  /// What the other side may send; its handshake deadline is the connect timeout.
  guard_limits limits;
  /// A peer that refuses the connection (nothing listens yet: a scheduler restarting) is tried
  /// again for this long, the connect timeout counting from the attempt that is accepted.
  std::chrono::milliseconds wait_while_refused{0};
};

/// A remote actor reached through a link_guard, which carries the connection while it lives.
struct guarded_connection {
  caf::actor remote;
  std::shared_ptr<link_guard> guard;
};

/// Connects `system` to the actor published at `where`. `role` names what the caller expects
/// there, for messages ("scheduler").
result<guarded_connection> connect_guarded(caf::actor_system& system, const endpoint& where,
                                           const char* role, const connect_options& options);

} // namespace strom::runtime
