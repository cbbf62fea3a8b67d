#include "strom/runtime/launch/host_list.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "strom/actors/messages.hpp"
#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/transport/endpoint.hpp"

namespace strom::runtime::launch {

namespace {

/// Trainers one node may run: as many as `strom node --workers` accepts (cli/commands.hpp).
constexpr std::uint64_t max_host_workers = 1024;

constexpr std::string_view blanks = " \t\r";

/// The whitespace-separated words of `line`.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0;;) {
    at = line.find_first_not_of(blanks, at);
    if (at == std::string_view::npos)
      return words;
    const auto end = std::min(line.find_first_of(blanks, at), line.size());
    words.push_back(line.substr(at, end - at));
    at = end;
  }
}

result<std::uint64_t> number_in(std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    return error{"not a non-negative integer"};
  if (value < min || value > max)
    return error{fmt::format("outside [{}, {}]", min, max)};
  return value;
}

/// "[user@]host[:port]" into `host`.
result<void> parse_destination(std::string_view text, launch_host& host) {
  if (auto at = text.find('@'); at != std::string_view::npos) {
    host.user = std::string{text.substr(0, at)};
    if (host.user.empty() || host.user.find_first_of("@'\"$`\\;") != std::string::npos)
      return error{"the user before '@' must be a plain name"};
    text.remove_prefix(at + 1);
  }
  // A port follows the last ':' unless the host is a bare IPv6 address (two or more colons).
  auto colon = text.rfind(':');
  const bool bracketed = !text.empty() && text.front() == '[';
  const bool bare_ipv6 = !bracketed && text.find(':') != colon;
  if (colon != std::string_view::npos && !bare_ipv6 && (!bracketed || text[colon - 1] == ']')) {
    auto port = number_in(text.substr(colon + 1), 1, 65535);
    if (!port)
      return error{fmt::format("the ssh port is {}", port.err().message)};
    host.ssh_port = static_cast<std::uint16_t>(*port);
    text = text.substr(0, colon);
  }
  auto name = parse_host(text);
  if (!name)
    return error{name.err().message};
  host.host = *name;
  return {};
}

/// Reads one `key=value` setting after a host into `host`.
result<void> parse_setting(std::string_view word, launch_host& host) {
  const auto equals = word.find('=');
  const auto key = word.substr(0, equals);
  const auto value = equals == std::string_view::npos ? std::string_view{}
                                                      : word.substr(equals + 1);
  if (equals == std::string_view::npos
      || (key != "workers" && key != "role" && key != "name"))
    return error{"unknown setting (workers=N, role=worker|server and name=NAME follow a host)"};
  if (key == "workers") {
    auto workers = number_in(value, 1, max_host_workers);
    if (!workers)
      return error{fmt::format("the worker count is {}", workers.err().message)};
    host.workers = static_cast<std::uint32_t>(*workers);
  } else if (key == "role") {
    if (value != actors::node_role_worker && value != actors::node_role_server)
      return error{fmt::format("the role is not {} or {}", actors::node_role_worker,
                               actors::node_role_server)};
    host.role = std::string{value};
  } else {
    // A node's name also names its certificate under --tls-dir: a certificate's rules.
    if (auto problem = certificate_name_problem(std::string{value}); !problem.empty())
      return error{problem};
    host.name = std::string{value};
  }
  return {};
}

} // namespace

bool launch_host::local() const {
  return user.empty() && ssh_port == 0 && (host == "localhost" || host == "127.0.0.1");
}

std::string launch_host::ssh_destination() const {
  const auto name = host.find(':') == std::string::npos ? host : "[" + host + "]";
  return user.empty() ? name : user + "@" + name;
}

result<std::vector<launch_host>> parse_host_list(std::string_view text, const std::string& source) {
  std::vector<launch_host> hosts;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = std::min(text.find('\n'), text.size());
    auto line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    line = line.substr(0, std::min(line.find('#'), line.size()));
    const auto words = words_of(line);
    if (words.empty())
      continue;
    const auto where = fmt::format("{}:{}", source, line_number);
    launch_host host;
    host.origin = where;
    if (auto ok = parse_destination(words[0], host); !ok)
      return error{fmt::format("{}: '{}': {}", where, words[0], ok.err().message)};
    for (std::size_t i = 1; i < words.size(); ++i)
      if (auto ok = parse_setting(words[i], host); !ok)
        return error{fmt::format("{}: '{}': {}", where, words[i], ok.err().message)};
    hosts.push_back(std::move(host));
  }
  if (hosts.empty())
    return error{fmt::format("{}: no hosts (one a line: localhost, or [user@]host[:port] for ssh)",
                             source)};
  return hosts;
}

result<std::vector<launch_host>> read_host_file(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    return error{fmt::format("cannot read the hosts file '{}'", path)};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_host_list(text.str(), path);
}

} // namespace strom::runtime::launch
