#pragma once
// A blocking TLS client on 127.0.0.1 for tests that play a peer by hand: an attacker who holds
// a certificate the CA signed and sends hostile BASP bytes inside TLS.

#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>

#include "strom/runtime/security/tls_context.hpp"
#include "support/loopback_socket.hpp"

namespace strom::test {

/// One TLS connection; closed at scope exit.
class tls_socket {
public:
  /// Connects to 127.0.0.1:port and completes the TLS handshake with `identity`; ok() says
  /// whether both worked.
  tls_socket(std::uint16_t port, const runtime::tls_context& identity)
      : fd_(connect_loopback(port)), ssl_(SSL_new(identity.native())) {
    // SSL_write uses write(): to a peer that closed the link (what these tests provoke) it
    // raises SIGPIPE, which would end the test instead of making send() return false.
    std::signal(SIGPIPE, SIG_IGN);
    if (fd_ >= 0 && ssl_ && SSL_set_fd(ssl_, fd_) == 1)
      connected_ = SSL_connect(ssl_) == 1;
  }
  ~tls_socket() {
    SSL_free(ssl_);
    if (fd_ >= 0)
      ::close(fd_);
  }
  tls_socket(const tls_socket&) = delete;
  tls_socket& operator=(const tls_socket&) = delete;

  bool ok() const noexcept { return connected_; }

  /// Sends all `size` bytes; false when the connection broke.
  bool send(const void* bytes, std::size_t size) {
    return SSL_write(ssl_, bytes, static_cast<int>(size)) == static_cast<int>(size);
  }

  /// Reads exactly `size` bytes into `bytes`; false when the link broke first.
  bool receive(void* bytes, std::size_t size) {
    auto* at = static_cast<char*>(bytes);
    while (size > 0) {
      const int got = SSL_read(ssl_, at, static_cast<int>(size));
      if (got <= 0)
        return false;
      at += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  }

  /// Reads and discards until the other side closes or fails the link (true) or `limit`
  /// passes (false).
  bool closed_within(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char sink[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd watched{fd_, POLLIN, 0};
      if (SSL_pending(ssl_) == 0 && ::poll(&watched, 1, 20) <= 0)
        continue;
      if (SSL_read(ssl_, sink, sizeof sink) <= 0)
        return true;
    }
    return false;
  }

private:
  int fd_;
  SSL* ssl_;
  bool connected_ = false;
};

} // namespace strom::test
