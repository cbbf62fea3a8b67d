#pragma once
// The hosts file of `strom launch`: one host a line, where a node of the cluster runs.
//
//   # comment
//   localhost               a local process (so is 127.0.0.1)
//   alice@gpu7:2222 workers=4   over ssh as alice, port 2222, four trainers
//   localhost role=server name=ps1   a kvstore server node named ps1
//
// An entry with a user or a port is always reached over ssh, even on loopback: that is how
// the ssh path is tested against an sshd on 127.0.0.1.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime::launch {

/// One line of a hosts file.
struct launch_host {
  std::string user;           ///< empty: ssh's default (the current user or its config)
  std::string host;           ///< "localhost", "gpu7", "10.0.0.5"
  std::uint16_t ssh_port = 0; ///< 0: ssh's default
  std::uint32_t workers = 0;  ///< trainers on this node; 0: the node's default (one a core)
  std::string role;           ///< "worker" or "server" (strom node --role)
  std::string name;           ///< the node's name (strom node --name); empty: its default
  /// Where it was written, "FILE:LINE", for messages.
  std::string origin;

  /// True for a plain `localhost` or `127.0.0.1`: started here, without ssh.
  bool local() const;
  /// "user@host" or "host", as ssh takes it.
  std::string ssh_destination() const;
};

/// Parses a hosts file's text; `source` names it in errors, which read
/// "SOURCE:LINE: 'VALUE': why". A file without any host is an error too.
result<std::vector<launch_host>> parse_host_list(std::string_view text, const std::string& source);

/// Reads and parses the hosts file at `path`.
result<std::vector<launch_host>> read_host_file(const std::string& path);

} // namespace strom::runtime::launch
