#include "strom/runtime/transport/endpoint.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace strom::runtime {

namespace {

/// Largest TCP port (16-bit field in the TCP header, RFC 793).
constexpr unsigned max_port = 65535;

/// Longest DNS name (RFC 1035, section 2.3.4).
constexpr std::size_t max_host_name_length = 253;

bool is_host_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

/// Checks an IPv6 address, allowing a zone suffix ("fe80::1%eth0").
result<std::string> check_ipv6(std::string_view address) {
  const auto zone = address.find('%');
  if (zone == 0 || zone + 1 == address.size())
    return error{fmt::format("IPv6 host '{}' has an empty address or zone", address)};
  const std::string bare{address.substr(0, zone)};
  in6_addr parsed{};
  if (inet_pton(AF_INET6, bare.c_str(), &parsed) != 1)
    return error{fmt::format("host '{}' is not an IPv6 address", bare)};
  return std::string{address};
}

} // namespace

result<std::string> parse_host(std::string_view text) {
  if (text.empty())
    return error{"missing host"};
  if (text.front() == '[') {
    if (text.size() < 2 || text.back() != ']')
      return error{fmt::format("host '{}' has '[' without a closing ']'", text)};
    return check_ipv6(text.substr(1, text.size() - 2));
  }
  if (text.find(':') != std::string_view::npos)
    return check_ipv6(text);
  if (text.size() > max_host_name_length)
    return error{fmt::format("host '{}...' is longer than {} characters", text.substr(0, 32),
                             max_host_name_length)};
  const auto bad = std::find_if_not(text.begin(), text.end(), is_host_name_char);
  if (bad != text.end())
    return error{fmt::format(
      "host '{}' may only hold letters, digits, '-', '.' and '_', found '{}' at offset {}",
      text, *bad, bad - text.begin())};
  return std::string{text};
}

result<endpoint> parse_endpoint(std::string_view text) {
  std::string_view host_text;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos)
      return error{fmt::format("'{}': '[' without a closing ']'", text)};
    if (close + 1 == text.size() || text[close + 1] != ':')
      return error{fmt::format("'{}': expected ':PORT' after ']'", text)};
    host_text = text.substr(0, close + 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
      return error{fmt::format("'{}': expected HOST:PORT or [IPv6]:PORT", text)};
    // An IPv6 host holds ':' itself, so it must come in brackets.
    if (text.find(':', colon + 1) != std::string_view::npos)
      return error{fmt::format("'{}': write an IPv6 host in brackets, as in '[::1]:8080'", text)};
    host_text = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto host = parse_host(host_text);
  if (!host)
    return error{fmt::format("'{}': {}", text, host.err().message)};
  if (port_text.empty())
    return error{fmt::format("'{}': missing port after ':'", text)};
  if (!std::all_of(port_text.begin(), port_text.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return error{fmt::format("'{}': port '{}' is not a decimal number", text, port_text)};
  unsigned long port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > max_port)
    return error{fmt::format("'{}': port must be 0..{}", text, max_port)};
  return endpoint{std::move(*host), static_cast<std::uint16_t>(port)};
}

std::string to_string(const endpoint& value) {
  if (value.host.find(':') != std::string::npos)
    return fmt::format("[{}]:{}", value.host, value.port);
  return fmt::format("{}:{}", value.host, value.port);
}

} // namespace strom::runtime
