#include "strom/runtime/security/tls_context.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include <fmt/format.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "strom/log.hpp"
#include "strom/runtime/security/openssl_error.hpp"

namespace strom::runtime {

namespace {

/// Largest PEM file read: a certificate or key is a few KiB; a CA bundle of a hundred
/// certificates stays well under this.
constexpr std::size_t max_pem_bytes = 1024 * 1024;

using bio_ptr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using certificate_ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using context_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;

/// One of the three files and the option that named it, for messages.
struct named_file {
  const char* option;
  const std::string& path;
  std::string where() const { return fmt::format("{} {}", option, path); }
};

result<bio_ptr> read_pem(const named_file& file) {
  if (file.path.empty())
    return error{fmt::format("{} needs a file", file.option)};
  std::ifstream in{file.path, std::ios::binary};
  if (!in)
    return error{fmt::format("{}: cannot read it: {}", file.where(), std::strerror(errno))};
  std::string text;
  text.resize(max_pem_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_pem_bytes)
    return error{fmt::format("{}: larger than {} bytes: not a PEM file", file.where(),
                             max_pem_bytes)};
  bio_ptr bio{BIO_new(BIO_s_mem()), BIO_free};
  BIO_write(bio.get(), text.data(), static_cast<int>(text.size()));
  return bio;
}

/// Adds every certificate in the CA file to `context`'s trust store.
result<void> load_authority(SSL_CTX* context, const named_file& file) {
  auto pem = read_pem(file);
  if (!pem)
    return pem.err();
  auto* store = SSL_CTX_get_cert_store(context);
  int added = 0;
  while (certificate_ptr certificate{PEM_read_bio_X509(pem->get(), nullptr, nullptr, nullptr),
                                     X509_free}) {
    if (X509_STORE_add_cert(store, certificate.get()) != 1)
      return error{fmt::format("{}: {}", file.where(), take_openssl_error())};
    ++added;
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (added == 0)
    return error{fmt::format("{}: holds no PEM certificate", file.where())};
  return success();
}

/// Why the CA in `context` does not vouch for `certificate`; empty when it does.
std::string verify_against_authority(SSL_CTX* context, X509* certificate) {
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> check{X509_STORE_CTX_new(),
                                                                         X509_STORE_CTX_free};
  if (!check || X509_STORE_CTX_init(check.get(), SSL_CTX_get_cert_store(context), certificate,
                                    nullptr) != 1)
    return take_openssl_error();
  if (X509_verify_cert(check.get()) == 1)
    return {};
  ERR_clear_error();
  return X509_verify_cert_error_string(X509_STORE_CTX_get_error(check.get()));
}

result<peer_certificate> load_certificate(SSL_CTX* context, const named_file& file,
                                          const named_file& ca) {
  auto pem = read_pem(file);
  if (!pem)
    return pem.err();
  certificate_ptr certificate{PEM_read_bio_X509(pem->get(), nullptr, nullptr, nullptr),
                              X509_free};
  if (!certificate) {
    ERR_clear_error();
    return error{fmt::format("{}: holds no PEM certificate", file.where())};
  }
  if (auto why = verify_against_authority(context, certificate.get()); !why.empty())
    return error{fmt::format("{}: not signed by the CA in {} ({})", file.where(), ca.where(),
                             why)};
  const auto role = role_of(certificate.get());
  if (!role)
    return error{fmt::format("{}: carries no strom role (no subjectAltName {} or {}; make it "
                             "with strom certs init)", file.where(), role_uri(peer_role::node),
                             role_uri(peer_role::client))};
  if (SSL_CTX_use_certificate(context, certificate.get()) != 1)
    return error{fmt::format("{}: {}", file.where(), take_openssl_error())};
  return peer_certificate{common_name_of(certificate.get()), *role};
}

result<void> load_key(SSL_CTX* context, const named_file& file, const named_file& certificate) {
  auto pem = read_pem(file);
  if (!pem)
    return pem.err();
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{
    PEM_read_bio_PrivateKey(pem->get(), nullptr, nullptr, nullptr), EVP_PKEY_free};
  if (!key) {
    ERR_clear_error();
    return error{fmt::format("{}: holds no PEM private key (or one with a passphrase)",
                             file.where())};
  }
  if (SSL_CTX_use_PrivateKey(context, key.get()) != 1 || SSL_CTX_check_private_key(context) != 1) {
    ERR_clear_error();
    return error{fmt::format("{}: does not belong to the certificate in {}", file.where(),
                             certificate.where())};
  }
  return success();
}

} // namespace

result<std::shared_ptr<const tls_context>> tls_context::load(const tls_files& files) {
  const named_file ca{"--tls-ca", files.ca};
  const named_file certificate{"--tls-cert", files.certificate};
  const named_file key{"--tls-key", files.key};
  context_ptr context{SSL_CTX_new(TLS_method()), SSL_CTX_free};
  if (!context)
    return error{"cannot set up TLS: " + take_openssl_error()};
  SSL_CTX_set_min_proto_version(context.get(), TLS1_3_VERSION);
  // Partial writes: the guard sends what fits and keeps the rest; its buffer moves between
  // attempts (it erases what went out).
  SSL_CTX_set_mode(context.get(), SSL_MODE_ENABLE_PARTIAL_WRITE
                                    | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // No resumption: links are long-lived, and tickets would be bytes nobody uses.
  SSL_CTX_set_num_tickets(context.get(), 0);
  SSL_CTX_set_session_cache_mode(context.get(), SSL_SESS_CACHE_OFF);
  // A peer process that exits closes its socket without TLS's close_notify: that is an end,
  // not an attack (the guard has passed on only whole, checked messages anyway).
  SSL_CTX_set_options(context.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  if (auto loaded = load_authority(context.get(), ca); !loaded)
    return loaded.err();
  auto identity = load_certificate(context.get(), certificate, ca);
  if (!identity)
    return identity.err();
  if (auto loaded = load_key(context.get(), key, certificate); !loaded)
    return loaded.err();
  return std::shared_ptr<const tls_context>{
    new tls_context{context.release(), std::move(*identity)}};
}

tls_context::~tls_context() { SSL_CTX_free(context_); }

void warn_unauthenticated_once() {
  static std::once_flag warned;
  std::call_once(warned, [] {
    log::warning("unauthenticated: no --tls-ca given; peers are not verified and links are "
                 "not encrypted");
  });
}

} // namespace strom::runtime
