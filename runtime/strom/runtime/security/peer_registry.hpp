#pragma once
// Which certificate each connected peer process presented, by the node id its BASP handshake
// named. The link guard records a peer when its handshake passes and forgets it when its
// last link closes; the scheduler asks it who sent a join (current_sender()->node()), so that
// only holders of a node certificate join. Thread-safe: guards write on their threads, the
// scheduler reads on its own.
//
// A node id is what the peer claims in its handshake: a claim on the id of a process linked
// under another certificate's name is refused (CAF would take the claimant's messages for that
// process's); one under the same name with another role makes the id count with the lesser
// role (client), never the greater.

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <caf/node_id.hpp>

#include "strom/runtime/security/peer_role.hpp"

namespace strom::runtime {

class peer_registry {
public:
  /// A link from `node` with `certificate` passed its handshake; nullopt when recorded, else
  /// why not (`node` is linked under another certificate's name).
  std::optional<std::string> admit(const caf::node_id& node,
                                   const peer_certificate& certificate);

  /// A link from `node` that admit() recorded closed.
  void release(const caf::node_id& node);

  /// The certificate `node` presented, while one of its links is open.
  std::optional<peer_certificate> find(const caf::node_id& node) const;

private:
  struct entry {
    peer_certificate certificate;
    std::size_t links = 0;
  };
  mutable std::mutex mutex_;
  std::map<caf::node_id, entry> peers_;
};

/// Whether a node may join under `name` with a certificate made out to `certificate_name`: the
/// name is the certificate's, or begins with it and a '/' (processes that share one
/// certificate, e.g. "cluster/host1"). So a certificate binds the names its holder joins under.
bool name_fits_certificate(const std::string& name, const std::string& certificate_name);

/// That rule in words, for refusals: "a node joins under its certificate's name ('w1', or
/// 'w1/...' where processes share one certificate)".
std::string certificate_name_rule(const std::string& certificate_name);

/// Why the peer process `node` may not join as a node named `name` (its certificate has the
/// client role or is made out to another name, or no certificate is known for it); nullopt
/// when it may.
std::optional<std::string> join_refusal(const peer_registry& peers, const caf::node_id& node,
                                        const std::string& name);

} // namespace strom::runtime
