#pragma once
// What a certificate allows its holder in a strom cluster. The role travels inside the
// certificate as a subjectAltName URI, `strom:role:node` or `strom:role:client`, so that the
// CA's signature covers it: a node may join the scheduler and hold mesh links; a client may
// submit, attach, ask for status and cancel, but never join. The holder's name is the
// subject's common name (the NAME of `strom certs init --nodes NAME`).

#include <optional>
#include <string>

#include <openssl/types.h>

namespace strom::runtime {

/// What a certificate's holder may do.
enum class peer_role {
  node,    ///< join a scheduler, publish and reach relays
  client,  ///< submit, attach, status, cancel
};

/// "node" or "client".
const char* to_string(peer_role role);

/// The subjectAltName URI that marks `role`: "strom:role:node".
std::string role_uri(peer_role role);

/// Who a verified certificate names and what it allows.
struct peer_certificate {
  std::string name;  ///< the subject's common name
  peer_role role = peer_role::client;
};

/// The role written into `certificate`, or nullopt when it carries none (a certificate made
/// elsewhere, which strom then does not trust with anything).
std::optional<peer_role> role_of(X509* certificate);

/// The subject's common name of `certificate`; empty when it has none.
std::string common_name_of(X509* certificate);

} // namespace strom::runtime
