#include "strom/runtime/launch/port_probe.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace strom::runtime::launch {

bool accepts_connections(const endpoint& where) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(where.port);
  if (::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found) != 0)
    return false;
  bool open = false;
  for (auto* address = found; address && !open; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC,
                            address->ai_protocol);
    if (fd < 0)
      continue;
    open = ::connect(fd, address->ai_addr, address->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return open;
}

} // namespace strom::runtime::launch
