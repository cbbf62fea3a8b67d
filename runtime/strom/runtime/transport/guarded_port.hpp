#pragma once
// A published actor whose port is held by a link_guard instead of CAF's middleman: every
// connection must open with a BASP client handshake within the deadline and sends only
// messages within the caps (link_guard.hpp says why CAF cannot be trusted with the port).

#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/transport/link_guard.hpp"

namespace strom::runtime {

/// The listening side: open while this object lives.
class guarded_port {
public:
  /// Listens on `where` (an empty or wildcard host: every interface; port 0: a free port) and
  /// serves `published` to every peer the guard admits. Errors name the endpoint and why.
  static result<std::unique_ptr<guarded_port>> open(caf::actor_system& system,
                                                    const caf::actor& published,
                                                    const endpoint& where,
                                                    const guard_limits& limits = {});

  /// The port it listens on.
  std::uint16_t port() const noexcept { return port_; }

  /// Stops listening: new peers are refused; the links already made stay while this lives.
  void stop_listening() { guard_->stop_serving(); }

private:
  guarded_port(std::uint16_t port, std::unique_ptr<link_guard> guard)
    : port_(port), guard_(std::move(guard)) {}

  std::uint16_t port_;
  std::unique_ptr<link_guard> guard_;
};

} // namespace strom::runtime
