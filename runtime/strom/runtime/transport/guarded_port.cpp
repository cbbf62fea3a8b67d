#include "strom/runtime/transport/guarded_port.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include <fmt/format.h>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include "strom/log.hpp"
#include "strom/runtime/transport/middleman_pair.hpp"

namespace strom::runtime {

namespace {

/// Connections the kernel queues before the guard accepts them (Linux's default somaxconn).
constexpr int listen_backlog = 128;

bool wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::";
}

/// A listening TCP socket on `where`, or why not.
result<int> listen_on(const endpoint& where) {
  addrinfo hints{};
  hints.ai_family = wildcard(where.host) ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const auto port = std::to_string(where.port);
  if (int code = getaddrinfo(wildcard(where.host) ? nullptr : where.host.c_str(), port.c_str(),
                             &hints, &found);
      code != 0)
    return error{fmt::format("cannot listen on {}: {}", to_string(where), gai_strerror(code))};
  std::string why = "no address";
  for (auto* candidate = found; candidate; candidate = candidate->ai_next) {
    const int fd = ::socket(candidate->ai_family,
                            candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    const int one = 1;
    const int zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (candidate->ai_family == AF_INET6)  // a wildcard listens on IPv4 too
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd, candidate->ai_addr, candidate->ai_addrlen) == 0
        && ::listen(fd, listen_backlog) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  return error{fmt::format("cannot listen on {}: {}", to_string(where), why)};
}

std::uint16_t local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6&>(address).sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in&>(address).sin_port);
}

} // namespace

result<std::unique_ptr<guarded_port>> guarded_port::open(caf::actor_system& system,
                                                         const caf::actor& published,
                                                         const endpoint& where,
                                                         const guard_limits& limits) {
  auto listener = listen_on(where);
  if (!listener)
    return listener.err();
  const auto port = local_port(*listener);
  auto guarded = limits;
  guarded.tls.self = system.node();
  auto guard = std::make_unique<link_guard>(guarded);
  auto broker = basp_broker_of(system);
  auto whom = caf::actor_cast<caf::strong_actor_ptr>(published);
  auto interface = system.message_types(published);
  guard->serve(*listener, [&system, broker, whom, interface, port](const std::string& peer) {
    auto pair = make_middleman_pair(system);
    if (!pair) {
      log::warning("turned away {}: {}", peer, pair.err().message);
      return -1;
    }
    // The broker answers this peer as the server of a fresh connection (server handshake).
    caf::anon_send(broker, caf::publish_atom_v, std::move(pair->middleman_end), port, whom,
                   interface);
    return pair->guard_end;
  });
  return std::unique_ptr<guarded_port>{new guarded_port{port, std::move(guard)}};
}

} // namespace strom::runtime
