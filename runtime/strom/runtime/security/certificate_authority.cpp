#include "strom/runtime/security/certificate_authority.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "strom/runtime/security/openssl_error.hpp"
#include "strom/runtime/security/peer_role.hpp"

namespace strom::runtime {

namespace {

namespace fs = std::filesystem;

/// Validity of every certificate: ten years, so a lab cluster never meets an expiry; an
/// operator who wants rotation makes a new directory.
constexpr long validity_seconds = 10L * 365 * 24 * 60 * 60;
/// Keys: ECDSA on P-256, the curve every TLS 1.3 peer supports and cheap to sign with.
constexpr const char* key_type = "EC";
constexpr const char* key_curve = "P-256";
/// Random serial bits: RFC 5280 allows 20 octets; 128 bits make collisions impossible.
constexpr int serial_bits = 128;
/// Mode of private keys (owner read and write only) and of certificates (world-readable).
constexpr mode_t key_mode = 0600;
constexpr mode_t certificate_mode = 0644;
/// The subject's organisation of every certificate strom makes.
constexpr const char* organisation = "strom";
constexpr const char* authority_name = "ca";

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using certificate_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

/// A fresh key pair, or why not.
result<key_ptr> make_key() {
  key_ptr key{EVP_PKEY_Q_keygen(nullptr, nullptr, key_type, key_curve), EVP_PKEY_free};
  if (!key)
    return error{"cannot make a key pair: " + take_openssl_error()};
  return key;
}

/// Adds the extension `nid` with `value` (OpenSSL's configuration syntax) to `certificate`.
bool add_extension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  if (!extension)
    return false;
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

bool set_serial(X509* certificate) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial{BN_new(), BN_free};
  return serial && BN_rand(serial.get(), serial_bits, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1
         && BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) != nullptr;
}

bool set_subject(X509* certificate, const std::string& name) {
  auto* subject = X509_get_subject_name(certificate);
  const auto text = [](const std::string& s) {
    return reinterpret_cast<const unsigned char*>(s.c_str());
  };
  return X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8, text(std::string{organisation}), -1, -1, 0)
         && X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, text(name), -1, -1, 0);
}

/// A certificate for `name` and `key`: the CA's own (self-signed) when `role` is empty, else
/// a member's with `role`, signed by `issuer` with `issuer_key`.
result<certificate_ptr> make_certificate(const std::string& name, EVP_PKEY* key,
                                         X509* issuer, EVP_PKEY* issuer_key,
                                         std::optional<peer_role> role) {
  certificate_ptr certificate{X509_new(), X509_free};
  const bool authority = !role;
  X509* signer = authority ? certificate.get() : issuer;
  bool ok = certificate && X509_set_version(certificate.get(), 2) == 1
            && set_serial(certificate.get())
            && X509_gmtime_adj(X509_getm_notBefore(certificate.get()), 0)
            && X509_gmtime_adj(X509_getm_notAfter(certificate.get()), validity_seconds)
            && X509_set_pubkey(certificate.get(), key) == 1 && set_subject(certificate.get(), name)
            && X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer)) == 1
            && add_extension(certificate.get(), signer, NID_subject_key_identifier, "hash");
  if (ok && authority)
    ok = add_extension(certificate.get(), signer, NID_basic_constraints, "critical,CA:TRUE")
         && add_extension(certificate.get(), signer, NID_key_usage,
                          "critical,keyCertSign,cRLSign");
  if (ok && !authority)
    ok = add_extension(certificate.get(), signer, NID_basic_constraints, "critical,CA:FALSE")
         && add_extension(certificate.get(), signer, NID_key_usage, "critical,digitalSignature")
         && add_extension(certificate.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth")
         && add_extension(certificate.get(), signer, NID_authority_key_identifier, "keyid")
         && add_extension(certificate.get(), signer, NID_subject_alt_name,
                          "URI:" + role_uri(*role));
  if (ok)
    ok = X509_sign(certificate.get(), authority ? key : issuer_key, EVP_sha256()) > 0;
  if (!ok)
    return error{fmt::format("cannot make the certificate of '{}': {}", name,
                             take_openssl_error())};
  return certificate;
}

/// Creates `path` with `mode` (never an existing file) and lets `write` fill it.
template <class Write>
result<void> write_new_file(const fs::path& path, mode_t mode, Write write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return error{fmt::format("cannot create {}: {}", path.string(), std::strerror(errno))};
  ::fchmod(fd, mode);  // the umask must not widen or narrow what a key file allows
  FILE* file = ::fdopen(fd, "w");
  if (!file) {
    ::close(fd);
    return error{fmt::format("cannot write {}: {}", path.string(), std::strerror(errno))};
  }
  const bool written = write(file) == 1;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed)
    return error{fmt::format("cannot write {}: {}", path.string(), take_openssl_error())};
  return success();
}

/// Writes NAME.pem and NAME.key into `directory`.
result<void> write_pair(const fs::path& directory, const std::string& name, X509* certificate,
                        EVP_PKEY* key) {
  if (auto written = write_new_file(directory / (name + ".key"), key_mode, [&](FILE* file) {
        return PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr);
      });
      !written)
    return written;
  return write_new_file(directory / (name + ".pem"), certificate_mode,
                        [&](FILE* file) { return PEM_write_X509(file, certificate); });
}

/// Checks every name and that none of the files exists yet; makes the directory.
result<void> prepare(const certificate_request& request) {
  const fs::path directory{request.directory};
  if (request.directory.empty())
    return error{"the certificate directory must not be empty"};
  std::set<std::string> seen;
  for (const auto* names : {&request.nodes, &request.clients})
    for (const auto& name : *names) {
      if (auto problem = certificate_name_problem(name); !problem.empty())
        return error{problem};
      if (!seen.insert(name).second)
        return error{fmt::format("the name '{}' is given twice", name)};
    }
  if (seen.empty())
    return error{"no names given: --nodes or --clients needs at least one"};
  std::error_code failure;
  fs::create_directories(directory, failure);
  if (failure || !fs::is_directory(directory))
    return error{fmt::format("cannot create the directory {}: {}", directory.string(),
                             failure ? failure.message() : "a file of that name exists")};
  seen.insert(authority_name);
  for (const auto& name : seen)
    for (const char* suffix : {".pem", ".key"})
      if (const auto file = directory / (name + suffix); fs::exists(file))
        return error{fmt::format("{} exists already; strom certs init never overwrites a key "
                                 "or certificate (choose another directory)", file.string())};
  if (::access(directory.c_str(), W_OK) != 0)
    return error{fmt::format("cannot write into {}: {}", directory.string(),
                             std::strerror(errno))};
  return success();
}

/// "strom CA" and a random tag: two clusters' CAs differ in name, so that a certificate of the
/// other is refused as not issued by this CA rather than as carrying a bad signature.
std::string authority_common_name() {
  std::uint32_t tag = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&tag), sizeof tag);
  return fmt::format("strom CA {:08x}", tag);
}

} // namespace

std::string certificate_name_problem(const std::string& name) {
  if (name.empty())
    return "a certificate name must not be empty";
  if (name == authority_name)
    return fmt::format("the name '{}' is the certificate authority's own", name);
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return fmt::format("the name '{}' may hold only letters, digits, '.', '_' and '-'", name);
  if (name.front() == '.')
    return fmt::format("the name '{}' must not start with '.'", name);
  return {};
}

result<void> init_certificates(const certificate_request& request) {
  if (auto prepared = prepare(request); !prepared)
    return prepared;
  const fs::path directory{request.directory};
  auto authority_key = make_key();
  if (!authority_key)
    return authority_key.err();
  auto authority = make_certificate(authority_common_name(), authority_key->get(), nullptr,
                                    nullptr, std::nullopt);
  if (!authority)
    return authority.err();
  if (auto written = write_pair(directory, authority_name, authority->get(), authority_key->get());
      !written)
    return written;
  for (const auto& [names, role] : {std::pair{&request.nodes, peer_role::node},
                                    std::pair{&request.clients, peer_role::client}})
    for (const auto& name : *names) {
      auto key = make_key();
      if (!key)
        return key.err();
      auto certificate = make_certificate(name, key->get(), authority->get(),
                                          authority_key->get(), role);
      if (!certificate)
        return certificate.err();
      if (auto written = write_pair(directory, name, certificate->get(), key->get()); !written)
        return written;
    }
  return success();
}

} // namespace strom::runtime
