#pragma once
// Which address a node tells the others to reach it at. A node listening on a wildcard, or
// on a machine with several interfaces (management, storage, fast fabric), cannot guess it
// from its listen address. The choice, first that is set: --advertise, the environment
// variable STROM_ADVERTISE_ADDRESS, the first local IPv4 address inside --netmask CIDR
// (Deeplearning4j's network mask idea), else the listen host (127.0.0.1 for a wildcard).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// The environment variable that overrides --netmask and the fallback.
inline constexpr const char* advertise_address_variable = "STROM_ADVERTISE_ADDRESS";

/// An IPv4 network such as 10.0.0.0/8.
struct ipv4_network {
  std::uint32_t address = 0;       ///< host byte order, no bits outside the prefix
  std::uint8_t prefix_length = 0;  ///< 0..32
};

/// One IPv4 address of a local network interface.
struct interface_address {
  std::string interface;  ///< "eth0"
  std::string address;    ///< "10.1.2.3"
};

/// What the command line says.
struct advertise_options {
  std::string advertise;  ///< --advertise: used as given (after a host check)
  std::string netmask;    ///< --netmask CIDR: pick the local address inside it
  std::string fallback;   ///< the listen host; a wildcard ("", 0.0.0.0, ::) means 127.0.0.1
};

/// Parses a dotted-quad IPv4 address into host byte order.
result<std::uint32_t> parse_ipv4(std::string_view text);

/// Parses "A.B.C.D/N"; errors name the text ("'10.0.0.0/33': prefix length must be 0..32").
result<ipv4_network> parse_cidr(std::string_view text);

/// True when `address` (host byte order) lies inside `network`.
bool contains(const ipv4_network& network, std::uint32_t address) noexcept;

/// "10.0.0.0/8".
std::string to_string(const ipv4_network& network);

/// The IPv4 addresses of the local interfaces that are up, in getifaddrs order.
result<std::vector<interface_address>> local_ipv4_addresses();

/// The first of `interfaces` inside `network`; the error lists every interface seen.
result<std::string> first_address_in(const ipv4_network& network,
                                     const std::vector<interface_address>& interfaces);

/// The address to advertise, reading STROM_ADVERTISE_ADDRESS from the environment.
result<std::string> choose_advertise_address(const advertise_options& options);

/// The address to advertise, with `environment_value` standing for STROM_ADVERTISE_ADDRESS
/// (empty: unset).
result<std::string> choose_advertise_address(const advertise_options& options,
                                             std::string_view environment_value);

} // namespace strom::runtime
