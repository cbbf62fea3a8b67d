#pragma once
// `strom certs init`: a small cluster's certificate authority and one key pair per member,
// made with OpenSSL's library so that a cluster or a test needs no other tool. The CA signs
// each member's certificate with its role (peer_role.hpp); keys are written with mode 0600,
// and nothing that exists is ever overwritten (a key replaced by mistake locks a node out).

#include <string>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// What `strom certs init` makes.
struct certificate_request {
  std::string directory;             ///< created when missing
  std::vector<std::string> nodes;    ///< names that get node certificates
  std::vector<std::string> clients;  ///< names that get client certificates
};

/// Writes DIRECTORY/ca.pem, DIRECTORY/ca.key and, per name, DIRECTORY/NAME.pem and
/// DIRECTORY/NAME.key. Errors name the file or name and why; on an error before anything was
/// written (a bad name, an existing file) nothing is.
result<void> init_certificates(const certificate_request& request);

/// Why `name` cannot name a certificate's holder (it becomes a file name and a common
/// name: letters, digits, '.', '_' and '-', not "ca"), or an empty string when it can.
std::string certificate_name_problem(const std::string& name);

} // namespace strom::runtime
