#include "strom/runtime/transport/advertise_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "strom/runtime/transport/endpoint.hpp"

namespace strom::runtime {

namespace {

/// Bits in an IPv4 address.
constexpr unsigned ipv4_bits = 32;

/// Advertised when the listen host is a wildcard and nothing else is set: reachable at least
/// from the same machine, which is where a single-node setup runs.
constexpr const char* loopback_address = "127.0.0.1";

/// The mask of the first `prefix_length` bits, host byte order.
std::uint32_t prefix_mask(std::uint8_t prefix_length) noexcept {
  return prefix_length == 0 ? 0u : ~std::uint32_t{0} << (ipv4_bits - prefix_length);
}

std::string ipv4_to_string(std::uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xffu,
                     (address >> 8) & 0xffu, address & 0xffu);
}

bool is_wildcard(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

/// A host given by the user, checked; `source` names where it came from.
result<std::string> checked_host(std::string_view source, std::string_view host) {
  auto parsed = parse_host(host);
  if (!parsed)
    return error{fmt::format("{}: {}", source, parsed.err().message)};
  return parsed;
}

} // namespace

result<std::uint32_t> parse_ipv4(std::string_view text) {
  const std::string copy{text};
  in_addr parsed{};
  if (inet_pton(AF_INET, copy.c_str(), &parsed) != 1)
    return error{fmt::format("'{}' is not a dotted-quad IPv4 address", text)};
  return std::uint32_t{ntohl(parsed.s_addr)};
}

result<ipv4_network> parse_cidr(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos)
    return error{fmt::format("'{}': expected an IPv4 network as A.B.C.D/N", text)};
  auto address = parse_ipv4(text.substr(0, slash));
  if (!address)
    return error{fmt::format("'{}': {}", text, address.err().message)};
  const auto length_text = text.substr(slash + 1);
  unsigned length = 0;
  const auto [end, ec] =
    std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
  if (length_text.empty() || ec != std::errc{} || end != length_text.data() + length_text.size()
      || length > ipv4_bits)
    return error{fmt::format("'{}': prefix length must be 0..{}", text, ipv4_bits)};
  ipv4_network network{*address, static_cast<std::uint8_t>(length)};
  // Bits outside the prefix are usually a typo for another network: refuse to guess.
  if ((network.address & ~prefix_mask(network.prefix_length)) != 0)
    return error{fmt::format("'{}': address has bits set outside the /{} prefix (did you mean "
                             "{}/{}?)",
                             text, length,
                             ipv4_to_string(network.address & prefix_mask(network.prefix_length)),
                             length)};
  return network;
}

bool contains(const ipv4_network& network, std::uint32_t address) noexcept {
  return (address & prefix_mask(network.prefix_length)) == network.address;
}

std::string to_string(const ipv4_network& network) {
  return fmt::format("{}/{}", ipv4_to_string(network.address), network.prefix_length);
}

result<std::vector<interface_address>> local_ipv4_addresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    return error{fmt::format("getifaddrs: {}", std::strerror(errno))};
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owned{list, &freeifaddrs};
  std::vector<interface_address> out;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET
        || (entry->ifa_flags & IFF_UP) == 0)
      continue;
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    out.push_back({entry->ifa_name, ipv4_to_string(ntohl(ipv4->sin_addr.s_addr))});
  }
  return out;
}

result<std::string> first_address_in(const ipv4_network& network,
                                     const std::vector<interface_address>& interfaces) {
  for (const auto& candidate : interfaces) {
    auto address = parse_ipv4(candidate.address);
    if (address && contains(network, *address))
      return candidate.address;
  }
  std::string seen;
  for (const auto& candidate : interfaces)
    seen += fmt::format("{}{} {}", seen.empty() ? "" : ", ", candidate.interface,
                        candidate.address);
  return error{fmt::format("--netmask {}: no local interface has an IPv4 address in it "
                           "(interfaces seen: {})",
                           to_string(network), seen.empty() ? "none" : seen)};
}

result<std::string> choose_advertise_address(const advertise_options& options) {
  const char* environment_value = std::getenv(advertise_address_variable);
  return choose_advertise_address(options, environment_value ? environment_value : "");
}

result<std::string> choose_advertise_address(const advertise_options& options,
                                             std::string_view environment_value) {
  if (!options.advertise.empty())
    return checked_host("--advertise", options.advertise);
  if (!environment_value.empty())
    return checked_host(advertise_address_variable, environment_value);
  if (!options.netmask.empty()) {
    auto network = parse_cidr(options.netmask);
    if (!network)
      return error{fmt::format("--netmask {}", network.err().message)};
    auto interfaces = local_ipv4_addresses();
    if (!interfaces)
      return interfaces.err();
    return first_address_in(*network, *interfaces);
  }
  if (is_wildcard(options.fallback))
    return std::string{loopback_address};
  return checked_host("listen host", options.fallback);
}

} // namespace strom::runtime
