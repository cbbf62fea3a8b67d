#pragma once
// A plain HTTP/1.0 GET over a real loopback socket, and a reader for Prometheus's text
// format, for tests of /metrics (runtime/strom/runtime/observability/).

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/loopback_socket.hpp"

namespace strom::test {

/// Time a GET may take before the test gives up on its answer.
inline constexpr int http_timeout_seconds = 5;

/// The body of GET http://127.0.0.1:port/path, or nullopt when the connection fails or the
/// status is not 200.
inline std::optional<std::string> http_get(std::uint16_t port, const std::string& path) {
  const int fd = connect_loopback(port);
  if (fd < 0)
    return std::nullopt;
  timeval limit{http_timeout_seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, request.data(), request.size(), 0);
  std::string response;
  char buffer[4096];
  for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
    response.append(buffer, static_cast<std::size_t>(got));
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.find(" 200 ") > response.find("\r\n")
      || body == std::string::npos)
    return std::nullopt;
  return response.substr(body + 4);
}

/// The value of the first sample of metric `name` in Prometheus text `exposition` whose
/// labels include every one of `labels` (e.g. {"strom_job=\"1\""}), or nullopt.
inline std::optional<double> metric_value(const std::string& exposition, const std::string& name,
                                          const std::vector<std::string>& labels = {}) {
  std::istringstream lines{exposition};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name, 0) != 0 || (line.size() > name.size() && line[name.size()] != '{'
                                     && line[name.size()] != ' '))
      continue;
    const auto set = line.substr(name.size(), line.rfind(' ') - name.size());
    const bool all = std::all_of(labels.begin(), labels.end(), [&](const std::string& label) {
      return set.find(label) != std::string::npos;
    });
    if (all)
      return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

} // namespace strom::test
