#pragma once
// TLS on one guarded link: the link_guard's socket to a peer carries TLS records, and this
// session turns them into the plaintext BASP bytes the guard checks and back. Why TLS ends in
// the guard and not in CAF's OpenSSL module (libcaf_openssl): that module's manager owns the
// sockets itself and hands decrypted bytes straight to CAF's BASP reader, which would bypass
// the guard and with it every hostile-input rule (size caps before allocation, handshake
// deadlines, connection caps). Here nothing a peer sends reaches basp_stream_check before its
// TLS handshake, with a certificate the CA signed, is complete.
//
// Non-blocking: every call does what the socket allows and says what it waits for.
//
// A session may also run on memory instead of a socket (a BIO pair): `strom sim` carries its
// simulated links' frames through such sessions (runtime/sim/tls_pipe.hpp).

#include <cstddef>
#include <string>
#include <vector>

#include <openssl/types.h>

#include "strom/runtime/security/peer_role.hpp"
#include "strom/runtime/security/tls_context.hpp"

namespace strom::runtime {

/// What a plaintext guard answers a TLS peer before it closes: a fatal protocol_version alert
/// record (RFC 8446, 6: level fatal(2), description protocol_version(70)), so that the TLS
/// side learns "plaintext here" even when the close overtakes the plaintext greeting.
inline constexpr unsigned char plaintext_endpoint_alert[] = {21, 3, 3, 0, 2, 2, 70};

/// The first byte of a TLS record that opens a handshake (RFC 8446, 5.1: handshake(22)).
inline constexpr unsigned char tls_handshake_record = 22;

class tls_session {
public:
  /// Which end of the TCP connection this process is.
  enum class side { accepting, connecting };

  /// What a call achieved or waits for.
  enum class status {
    done,        ///< the handshake completed, or bytes were moved
    want_read,   ///< call again once the socket is readable
    want_write,  ///< call again once the socket is writable
    closed,      ///< the peer closed the connection
    failed,      ///< failure() says why; the link is dead
  };

  /// A session on the connected non-blocking socket `fd` (not taken).
  tls_session(const tls_context& context, int fd, side which);
  /// A session on memory: what it sends is taken with take_sent(), what its peer sent is
  /// given with put_received().
  tls_session(const tls_context& context, side which);
  ~tls_session();
  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;

  /// Advances the handshake. Done once the peer's certificate chains to the CA and carries a
  /// strom role; failed with the reason in words ("certificate not signed by the CA (...)",
  /// "it speaks plaintext, not TLS").
  status handshake();

  /// True once handshake() returned done.
  bool established() const noexcept { return established_; }

  /// The peer's certificate; valid once established.
  const peer_certificate& peer() const noexcept { return peer_; }

  /// Decrypts at most `capacity` bytes into `out`; `moved` says how many (only with done).
  status read(unsigned char* out, std::size_t capacity, std::size_t& moved);

  /// Encrypts and sends at most `size` bytes of `bytes`; `moved` says how many were taken.
  /// A retry after want_write must offer at least the bytes offered before (OpenSSL's rule).
  status write(const unsigned char* bytes, std::size_t size, std::size_t& moved);

  /// Why the session failed.
  const std::string& failure() const noexcept { return failure_; }

  /// Memory sessions: appends the TLS bytes waiting to be sent to `out`; how many.
  std::size_t take_sent(std::vector<unsigned char>& out);

  /// Memory sessions: gives the session `size` bytes its peer sent; how many fit (the
  /// memory holds one whole record).
  std::size_t put_received(const unsigned char* bytes, std::size_t size);

private:
  status outcome_of(int returned, const char* during);
  bool peer_speaks_plaintext();

  SSL* ssl_;
  int fd_;                  // -1: a memory session
  BIO* network_ = nullptr;  // memory sessions: the BIO pair's far end
  bool established_ = false;
  peer_certificate peer_;
  std::string failure_;
};

} // namespace strom::runtime
