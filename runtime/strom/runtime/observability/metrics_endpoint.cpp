#include "strom/runtime/observability/metrics_endpoint.hpp"

#include <exception>

#include <fmt/format.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

namespace strom::runtime {

namespace {

/// Threads serving scrapes: a Prometheus server scrapes one target once per interval, so
/// one spare lets a person's curl in meanwhile.
constexpr std::size_t scrape_threads = 2;

/// civetweb's listening-port syntax: IPv6 hosts in brackets, as to_string writes them.
std::string listening_ports(const endpoint& where) { return to_string(where); }

} // namespace

result<std::unique_ptr<metrics_endpoint>>
metrics_endpoint::open(const endpoint& where, std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<metrics_endpoint> opened{new metrics_endpoint};
  try {
    opened->exposer_ =
      std::make_unique<prometheus::Exposer>(listening_ports(where), scrape_threads);
  } catch (const std::exception& e) {
    return error{fmt::format("cannot serve metrics on {} (--metrics-listen): the address is "
                             "in use or cannot be bound ({})", to_string(where), e.what())};
  }
  const auto ports = opened->exposer_->GetListeningPorts();
  if (ports.empty())
    return error{fmt::format("cannot serve metrics on {} (--metrics-listen): no port opened",
                             to_string(where))};
  opened->port_ = static_cast<std::uint16_t>(ports.front());
  opened->registry_ = std::move(registry);
  opened->exposer_->RegisterCollectable(opened->registry_);
  return opened;
}

metrics_endpoint::~metrics_endpoint() = default;

} // namespace strom::runtime
