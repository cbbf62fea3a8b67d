#pragma once
// Two actor systems over loopback with link guards between them: a server whose doubling
// actor sits behind a guarded port, and a client that connects through connect_guarded.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>
#include <caf/all.hpp>

#include "strom/runtime/system_config.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/transport/guarded_port.hpp"

namespace strom::test {

using namespace std::chrono_literals;

inline caf::behavior doubler() {
  return {[](std::int32_t x) { return x * 2; }};
}

/// A server system with a doubling actor behind a guarded port on loopback.
struct served {
  explicit served(runtime::guard_limits limits = {}) {
    doubling = system.spawn(doubler);
    auto opened = runtime::guarded_port::open(system, doubling, {"127.0.0.1", 0}, limits);
    BOOST_REQUIRE_MESSAGE(opened.ok(), (opened.ok() ? std::string{} : opened.err().message));
    port = std::move(*opened);
  }
  ~served() {
    port.reset();
    caf::anon_send_exit(doubling, caf::exit_reason::user_shutdown);
  }
  std::uint16_t number() const { return port->port(); }

  runtime::system_config config{true};
  caf::actor_system system{config};
  caf::actor doubling;
  std::unique_ptr<runtime::guarded_port> port;
};

/// A client system; asks the served actor to double 21.
struct client {
  runtime::system_config config{true};
  caf::actor_system system{config};

  strom::result<runtime::guarded_connection> connect(std::uint16_t port,
                                                     runtime::connect_options options = {}) {
    return runtime::connect_guarded(system, {"127.0.0.1", port}, "test server", options);
  }

  bool doubles(const caf::actor& remote) {
    caf::scoped_actor self{system};
    std::int32_t answer = 0;
    self->request(remote, 5s, std::int32_t{21}).receive([&](std::int32_t x) { answer = x; },
                                                        [](caf::error&) {});
    return answer == 42;
  }
};

} // namespace strom::test
