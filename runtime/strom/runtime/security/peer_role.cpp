#include "strom/runtime/security/peer_role.hpp"

#include <memory>

#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace strom::runtime {

namespace {

constexpr const char* role_uri_prefix = "strom:role:";

} // namespace

const char* to_string(peer_role role) {
  return role == peer_role::node ? "node" : "client";
}

std::string role_uri(peer_role role) {
  return std::string{role_uri_prefix} + to_string(role);
}

std::optional<peer_role> role_of(X509* certificate) {
  auto* names = static_cast<GENERAL_NAMES*>(
    X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (!names)
    return std::nullopt;
  std::optional<peer_role> role;
  for (int i = 0; i < sk_GENERAL_NAME_num(names) && !role; ++i) {
    const auto* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI)
      continue;
    const std::string uri{reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.ia5)),
                          static_cast<std::size_t>(ASN1_STRING_length(name->d.ia5))};
    for (auto candidate : {peer_role::node, peer_role::client})
      if (uri == role_uri(candidate))
        role = candidate;
  }
  GENERAL_NAMES_free(names);
  return role;
}

std::string common_name_of(X509* certificate) {
  auto* subject = X509_get_subject_name(certificate);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at < 0)
    return {};
  const auto* text = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
          static_cast<std::size_t>(ASN1_STRING_length(text))};
}

} // namespace strom::runtime
