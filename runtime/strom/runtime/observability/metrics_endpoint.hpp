#pragma once
// Serves a Prometheus registry at http://HOST:PORT/metrics in the text format
// (--metrics-listen), with prometheus-cpp's embedded server (civetweb) on threads of its own.

#include <cstdint>
#include <memory>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"

namespace prometheus {
class Exposer;
class Registry;
} // namespace prometheus

namespace strom::runtime {

/// An open /metrics port; closed when destroyed.
class metrics_endpoint {
public:
  /// Listens on `where` (port 0: a free port) and serves `registry`; the error names the
  /// address and why (a port in use).
  static result<std::unique_ptr<metrics_endpoint>>
  open(const endpoint& where, std::shared_ptr<prometheus::Registry> registry);

  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  /// The port it listens on (the one chosen for port 0).
  std::uint16_t port() const noexcept { return port_; }

private:
  metrics_endpoint() = default;

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::uint16_t port_ = 0;
};

} // namespace strom::runtime
