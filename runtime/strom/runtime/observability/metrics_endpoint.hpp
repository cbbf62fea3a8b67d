#pragma once
// Serves a Prometheus registry at http://HOST:PORT/metrics in the text format
// (--metrics-listen) and, on a scheduler, its live dashboard at / (dashboard_page.hpp, whose
// script follows /status.json), with civetweb (the server prometheus-cpp's pull part uses too)
// on threads of its own.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"

class CivetServer;

namespace prometheus {
class Registry;
} // namespace prometheus

namespace strom::runtime {

/// The dashboard's data as JSON, made at each request (live_cluster::json).
using status_source = std::function<std::string()>;

/// An open /metrics port; closed when destroyed.
class metrics_endpoint {
public:
  /// Listens on `where` (port 0: a free port) and serves `registry`, and with `status` the
  /// dashboard; the error names the address and why (a port in use).
  static result<std::unique_ptr<metrics_endpoint>>
  open(const endpoint& where, std::shared_ptr<prometheus::Registry> registry,
       status_source status = {});

  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  /// The port it listens on (the one chosen for port 0).
  std::uint16_t port() const noexcept { return port_; }

private:
  struct handlers;

  metrics_endpoint();

  std::unique_ptr<handlers> handlers_;  // outlive the server, which calls them
  std::unique_ptr<CivetServer> server_;
  std::uint16_t port_ = 0;
};

} // namespace strom::runtime
