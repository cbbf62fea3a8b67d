#pragma once
// Where a node listens or whom it joins: "HOST:PORT" or "[IPv6]:PORT" as users write it on the
// command line and in daemon configs.

#include <cstdint>
#include <string>
#include <string_view>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// A host (name, IPv4 or IPv6 address, without brackets) and a TCP port.
struct endpoint {
  std::string host;        ///< "node7", "10.0.0.5" or "fe80::1"
  std::uint16_t port = 0;  ///< 0 asks the system for a free port when listening
};

/// Checks a host name or address: "node7.cluster", "10.0.0.5", "::1" or "[::1]"; returns it
/// without brackets. Errors quote the host ("host 'a b' may only hold letters, ...").
result<std::string> parse_host(std::string_view text);

/// Parses "HOST:PORT" or "[IPv6]:PORT"; errors quote the text and name the problem
/// ("'localhost:99999': port must be 0..65535").
result<endpoint> parse_endpoint(std::string_view text);

/// "host:port", with brackets around an IPv6 host: parse_endpoint reads it back.
std::string to_string(const endpoint& value);

} // namespace strom::runtime
