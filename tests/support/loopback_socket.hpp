#pragma once
// Raw TCP sockets on 127.0.0.1 for tests that play a peer by hand (a stranger, an attacker).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace strom::test {

/// A blocking socket connected to 127.0.0.1:port, or -1.
inline int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// A socket listening on 127.0.0.1 at a free port (stored in `port`) with `backlog`.
inline int listen_loopback(int backlog, std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(fd, backlog);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

/// Reads and discards until the other side closes (true) or `limit` passes (false).
inline bool closed_within(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char sink[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd, POLLIN, 0};
    if (::poll(&watched, 1, 20) > 0 && ::recv(fd, sink, sizeof sink, 0) <= 0)
      return true;
  }
  return false;
}

/// Reads exactly `size` bytes into `bytes` within `limit`; false when the peer closed first or
/// the time ran out.
inline bool receive_exactly(int fd, void* bytes, std::size_t size,
                            std::chrono::milliseconds limit = std::chrono::seconds(2)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto* at = static_cast<char*>(bytes);
  while (size > 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    pollfd watched{fd, POLLIN, 0};
    if (::poll(&watched, 1, 20) <= 0)
      continue;
    const auto got = ::recv(fd, at, size, 0);
    if (got <= 0)
      return false;
    at += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

/// `count` connections to 127.0.0.1:port that each send `greeting` and then go silent.
inline std::vector<int> idle_connections(std::uint16_t port, int count,
                                         const std::vector<unsigned char>& greeting) {
  std::vector<int> idle;
  for (int i = 0; i < count; ++i) {
    const int fd = connect_loopback(port);
    if (fd >= 0)
      ::send(fd, greeting.data(), greeting.size(), MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  return idle;
}

/// How many of `fds` the other side closed within `limit` (all together); closes them all.
inline std::size_t closed_together_within(const std::vector<int>& fds,
                                          std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t closed = 0;
  for (int fd : fds) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    closed += fd >= 0 && closed_within(fd, std::max(left, std::chrono::milliseconds{0})) ? 1 : 0;
    if (fd >= 0)
      ::close(fd);
  }
  return closed;
}

} // namespace strom::test
