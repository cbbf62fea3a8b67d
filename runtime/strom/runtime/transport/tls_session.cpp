#include "strom/runtime/transport/tls_session.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "strom/runtime/security/openssl_error.hpp"

namespace strom::runtime {

namespace {

/// The first byte of an alert record (21), which a TLS peer may send instead of a handshake
/// record. Anything else is plaintext.
constexpr unsigned char tls_alert_record = 21;

/// Largest slice handed to SSL_write at once: OpenSSL counts in int.
constexpr std::size_t max_write_slice = 1 << 30;

/// Verification results that mean "another CA's certificate" (or none's).
bool foreign_issuer(long code) {
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      return true;
    default:
      return false;
  }
}

} // namespace

tls_session::tls_session(const tls_context& context, int fd, side which)
  : ssl_(SSL_new(context.native())), fd_(fd) {
  if (!ssl_ || SSL_set_fd(ssl_, fd) != 1)
    throw std::runtime_error{"cannot start a TLS session: " + take_openssl_error()};
  if (which == side::accepting)
    SSL_set_accept_state(ssl_);
  else
    SSL_set_connect_state(ssl_);
}

tls_session::tls_session(const tls_context& context, side which)
  : ssl_(SSL_new(context.native())), fd_(-1) {
  BIO* near = nullptr;
  // Sizes 0: OpenSSL's default (17 KiB), which holds one whole record.
  if (!ssl_ || BIO_new_bio_pair(&near, 0, &network_, 0) != 1)
    throw std::runtime_error{"cannot start a TLS session: " + take_openssl_error()};
  SSL_set_bio(ssl_, near, near);
  if (which == side::accepting)
    SSL_set_accept_state(ssl_);
  else
    SSL_set_connect_state(ssl_);
}

tls_session::~tls_session() {
  SSL_free(ssl_);
  if (network_)
    BIO_free(network_);
}

std::size_t tls_session::take_sent(std::vector<unsigned char>& out) {
  std::size_t taken = 0;
  for (std::size_t pending; (pending = BIO_ctrl_pending(network_)) > 0;) {
    const auto at = out.size();
    out.resize(at + pending);
    const int read = BIO_read(network_, out.data() + at, static_cast<int>(pending));
    out.resize(at + static_cast<std::size_t>(std::max(read, 0)));
    if (read <= 0)
      break;
    taken += static_cast<std::size_t>(read);
  }
  return taken;
}

std::size_t tls_session::put_received(const unsigned char* bytes, std::size_t size) {
  const int written = BIO_write(network_, bytes, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  return written > 0 ? static_cast<std::size_t>(written) : 0;
}

bool tls_session::peer_speaks_plaintext() {
  if (fd_ < 0)
    return false;  // a memory session's peer is another session
  // Only the peer's very first byte tells: later ones belong to records OpenSSL reads whole.
  if (BIO_number_read(SSL_get_rbio(ssl_)) != 0)
    return false;
  unsigned char first = 0;
  if (::recv(fd_, &first, 1, MSG_PEEK) != 1)
    return false;
  return first != tls_handshake_record && first != tls_alert_record;
}

tls_session::status tls_session::outcome_of(int returned, const char* during) {
  const int code = SSL_get_error(ssl_, returned);
  switch (code) {
    case SSL_ERROR_WANT_READ:
      return status::want_read;
    case SSL_ERROR_WANT_WRITE:
      return status::want_write;
    case SSL_ERROR_ZERO_RETURN:
      return status::closed;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {  // EOF or a reset: the peer went away
        ERR_clear_error();
        if (errno == 0 || errno == ECONNRESET || errno == EPIPE)
          return status::closed;
        failure_ = fmt::format("{}: {}", during, std::strerror(errno));
        return status::failed;
      }
      break;
    default:
      break;
  }
  const long verified = SSL_get_verify_result(ssl_);
  if (verified != X509_V_OK) {
    ERR_clear_error();
    const char* why = X509_verify_cert_error_string(verified);
    failure_ = foreign_issuer(verified)
                 ? fmt::format("certificate not signed by the CA ({})", why)
                 : fmt::format("certificate refused ({})", why);
    return status::failed;
  }
  const auto reason = take_openssl_error();
  // "wrong version number": the peer's first bytes came after our ClientHello went out (the
  // peek above saw nothing yet) and were no TLS record (seen on a loaded machine).
  if (reason.find("protocol version") != std::string::npos
      || reason.find("wrong version number") != std::string::npos)
    failure_ = fmt::format("it speaks plaintext, not TLS ({})", reason);
  else if (reason.find("unknown ca") != std::string::npos)
    failure_ = fmt::format("the peer does not trust our certificate ({}): it was signed by "
                           "another CA", reason);
  else if (reason.find("certificate required") != std::string::npos)
    failure_ = fmt::format("the peer wants a certificate ({})", reason);
  else
    failure_ = reason;
  return status::failed;
}

tls_session::status tls_session::handshake() {
  if (established_)
    return status::done;
  if (peer_speaks_plaintext()) {
    failure_ = "it speaks plaintext, not TLS";
    return status::failed;
  }
  ERR_clear_error();
  const int returned = SSL_do_handshake(ssl_);
  if (returned != 1) {
    auto outcome = outcome_of(returned, "TLS handshake");
    if (outcome == status::closed) {
      failure_ = "it closed the connection during the TLS handshake";
      return status::failed;
    }
    return outcome;
  }
  X509* certificate = SSL_get0_peer_certificate(ssl_);
  if (!certificate) {
    failure_ = "it presented no certificate";
    return status::failed;
  }
  const auto role = role_of(certificate);
  if (!role) {
    failure_ = fmt::format("the certificate of '{}' carries no strom role",
                           common_name_of(certificate));
    return status::failed;
  }
  peer_ = {common_name_of(certificate), *role};
  established_ = true;
  return status::done;
}

tls_session::status tls_session::read(unsigned char* out, std::size_t capacity,
                                      std::size_t& moved) {
  moved = 0;
  ERR_clear_error();
  const int returned = SSL_read(ssl_, out, static_cast<int>(std::min<std::size_t>(capacity, INT_MAX)));
  if (returned > 0) {
    moved = static_cast<std::size_t>(returned);
    return status::done;
  }
  return outcome_of(returned, "TLS read");
}

tls_session::status tls_session::write(const unsigned char* bytes, std::size_t size,
                                       std::size_t& moved) {
  moved = 0;
  ERR_clear_error();
  const int returned = SSL_write(ssl_, bytes, static_cast<int>(std::min(size, max_write_slice)));
  if (returned > 0) {
    moved = static_cast<std::size_t>(returned);
    return status::done;
  }
  return outcome_of(returned, "TLS write");
}

} // namespace strom::runtime
