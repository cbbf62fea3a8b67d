#include "strom/runtime/node/relay_links.hpp"

#include <memory>

#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/transport/guarded_port.hpp"

namespace strom::runtime {

actors::relay_publisher relay_publisher_on(caf::actor_system& system, std::string host,
                                           std::shared_ptr<const tls_context> tls) {
  guard_limits limits;
  limits.tls.context = std::move(tls);
  return [&system, host, limits](const caf::actor& relay) -> result<actors::published_relay> {
    auto port = guarded_port::open(system, relay, {host, 0}, limits);
    if (!port)
      return port.err();
    const auto endpoint = to_string(runtime::endpoint{host, (*port)->port()});
    return actors::published_relay{endpoint, std::shared_ptr<guarded_port>{std::move(*port)}};
  };
}

actors::relay_connector relay_connector_of(caf::actor_system& system,
                                           std::shared_ptr<const tls_context> tls) {
  connect_options options;
  options.limits.tls.context = std::move(tls);
  return [&system, options](const std::string& text) -> result<actors::relay_link> {
    auto where = parse_endpoint(text);
    if (!where)
      return error{"the relay's address: " + where.err().message};
    auto connection = connect_guarded(system, *where, "relay", options);
    if (!connection)
      return connection.err();
    return actors::relay_link{connection->remote, connection->guard};
  };
}

} // namespace strom::runtime
