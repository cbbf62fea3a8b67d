#pragma once
// A process's TLS identity: the cluster's CA, its own certificate and key, loaded once and
// shared by every guarded link (link_guard.hpp terminates TLS itself). Loading checks what
// would otherwise fail only at the first connection, naming the flag and file: unreadable or
// not PEM, a key that does not belong to the certificate, a certificate the CA did not sign or
// that carries no strom role.
//
// Every link is mutual: each side presents its certificate and the other verifies it against
// the CA (TLS 1.3 only; both ends are strom). Host names are not checked: peers are reached by
// address, and the CA, which signs only a cluster's members, is the trust anchor.

#include <memory>
#include <string>

#include <openssl/types.h>

#include "strom/compute/result.hpp"
#include "strom/runtime/security/peer_role.hpp"

namespace strom::runtime {

/// The three PEM files of --tls-ca, --tls-cert and --tls-key.
struct tls_files {
  std::string ca;
  std::string certificate;
  std::string key;
};

/// Logs once per process that peers are not verified (a strom process without --tls-ca).
void warn_unauthenticated_once();

class tls_context {
public:
  /// Loads and checks `files`; errors name the option and file ("--tls-key FILE: ...").
  static result<std::shared_ptr<const tls_context>> load(const tls_files& files);

  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  /// OpenSSL's context, for new sessions.
  SSL_CTX* native() const noexcept { return context_; }

  /// Whom this process's own certificate names, and its role.
  const peer_certificate& identity() const noexcept { return identity_; }

private:
  tls_context(SSL_CTX* context, peer_certificate identity)
    : context_(context), identity_(std::move(identity)) {}

  SSL_CTX* context_;
  peer_certificate identity_;
};

} // namespace strom::runtime
