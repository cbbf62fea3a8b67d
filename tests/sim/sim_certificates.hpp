#pragma once
// Certificates for the sim tests' TLS runs: a CA and its members, made as `strom certs init`
// makes them, and the --tls-* flags that present one of them.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "strom/runtime/security/certificate_authority.hpp"

namespace strom::test {

/// A CA in `dir` with node certificates for `nodes` and client certificates for `clients`.
inline void make_certificates(const std::filesystem::path& dir, std::vector<std::string> nodes,
                              std::vector<std::string> clients = {}) {
  auto made = runtime::init_certificates({dir.string(), std::move(nodes), std::move(clients)});
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
}

/// --tls-ca, --tls-cert and --tls-key for `name` of the CA in `dir`; the CA of `ca_dir` when
/// given (a certificate another CA signed).
inline std::string tls_flags(const std::filesystem::path& dir, const std::string& name,
                             const std::filesystem::path& ca_dir = {}) {
  const auto ca = (ca_dir.empty() ? dir : ca_dir) / "ca.pem";
  return "--tls-ca " + ca.string() + " --tls-cert " + (dir / (name + ".pem")).string()
         + " --tls-key " + (dir / (name + ".key")).string();
}

} // namespace strom::test
