#pragma once
// One TLS connection of a simulated link, in memory: two sessions (tls_session on a BIO pair),
// the connecting end at the sender and the accepting end at the receiver, each presenting its
// certificate and verifying the other's against the CA as on a real link. Frames are sealed
// and opened for real, so the bytes a link carries are TLS records; only the socket is
// missing. Also how `strom sim calibrate` measures what sealing and opening cost.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/tls_session.hpp"

namespace strom::runtime::sim {

/// Plaintext one TLS record holds at most (RFC 8446, 5.1: 2^14).
inline constexpr std::size_t tls_record_plaintext = 16384;

/// What a TLS 1.3 record adds to its plaintext: the 5-byte header, the inner content type and
/// the AEAD's 16-byte tag (AES-GCM and ChaCha20-Poly1305 alike).
inline constexpr std::size_t tls_record_overhead = 5 + 1 + 16;

/// The bytes `plaintext` bytes take on a TLS link, sent in records as full as they can be.
std::uint64_t tls_wire_bytes(std::uint64_t plaintext);

class tls_pipe {
public:
  /// Both ends' handshake, done in memory; the error says why the end that refused first
  /// refused ("certificate not signed by the CA (...)").
  static result<std::unique_ptr<tls_pipe>> open(const tls_context& connecting,
                                                const tls_context& accepting);

  /// Bytes the handshake moved, both ways together.
  std::uint64_t handshake_bytes() const noexcept { return handshake_bytes_; }

  /// `plaintext` sealed by the connecting end: the records on the wire.
  result<std::vector<unsigned char>> seal(std::span<const std::byte> plaintext);

  /// `records` opened by the accepting end into `out`, which holds exactly their plaintext.
  result<void> open_into(std::span<const unsigned char> records, std::span<std::byte> out);

private:
  tls_pipe(const tls_context& connecting, const tls_context& accepting);

  tls_session sender_;
  tls_session receiver_;
  std::uint64_t handshake_bytes_ = 0;
};

} // namespace strom::runtime::sim
