#include "strom/runtime/security/peer_registry.hpp"

#include <fmt/format.h>

namespace strom::runtime {

std::optional<std::string> peer_registry::admit(const caf::node_id& node,
                                                const peer_certificate& certificate) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto [found, fresh] = peers_.try_emplace(node, entry{certificate, 0});
  if (!fresh && found->second.certificate.name != certificate.name)
    return fmt::format("its handshake claims node {}, which is linked as '{}' (its certificate "
                       "names '{}')", to_string(node), found->second.certificate.name,
                       certificate.name);
  if (!fresh && found->second.certificate.role != certificate.role)
    found->second.certificate = {certificate.name, peer_role::client};
  ++found->second.links;
  return std::nullopt;
}

void peer_registry::release(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto found = peers_.find(node);
  if (found != peers_.end() && --found->second.links == 0)
    peers_.erase(found);
}

std::optional<peer_certificate> peer_registry::find(const caf::node_id& node) const {
  std::lock_guard<std::mutex> lock{mutex_};
  auto found = peers_.find(node);
  if (found == peers_.end())
    return std::nullopt;
  return found->second.certificate;
}

bool name_fits_certificate(const std::string& name, const std::string& certificate_name) {
  return name == certificate_name ||
         (name.size() > certificate_name.size() + 1 && name.rfind(certificate_name + "/", 0) == 0);
}

std::string certificate_name_rule(const std::string& certificate_name) {
  return fmt::format("a node joins under its certificate's name ('{}', or '{}/...' where "
                     "processes share one certificate)", certificate_name, certificate_name);
}

std::optional<std::string> join_refusal(const peer_registry& peers, const caf::node_id& node,
                                        const std::string& name) {
  const auto certificate = peers.find(node);
  if (!certificate)
    return fmt::format("no certificate is known for the process that sent the join ({}): a node "
                       "joins over its own TLS link", to_string(node));
  if (certificate->role != peer_role::node)
    return fmt::format("certificate of '{}' has role {}; joining needs a node certificate",
                       certificate->name, to_string(certificate->role));
  if (!name_fits_certificate(name, certificate->name))
    return fmt::format("node '{}' presents the certificate of '{}': {}", name,
                       certificate->name, certificate_name_rule(certificate->name));
  return std::nullopt;
}

} // namespace strom::runtime
