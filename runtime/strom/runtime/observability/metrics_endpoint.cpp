#include "strom/runtime/observability/metrics_endpoint.hpp"

#include <exception>
#include <vector>

#include <CivetServer.h>
#include <fmt/format.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "strom/runtime/observability/dashboard_page.hpp"

namespace strom::runtime {

namespace {

/// Threads serving requests: a Prometheus server scrapes one target once per interval, a
/// dashboard polls once a second; one more lets a person's curl in meanwhile.
constexpr int server_threads = 3;

/// civetweb's listening-port syntax: IPv6 hosts in brackets, as to_string writes them.
std::string listening_ports(const endpoint& where) { return to_string(where); }

/// Answers `conn` with `body` of `type`.
void answer(mg_connection* conn, const std::string& type, const std::string& body) {
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            type.c_str(), body.size());
  mg_write(conn, body.data(), body.size());
}

/// GET of one path, answered by `make` with content of `type`.
class get_handler : public CivetHandler {
public:
  get_handler(std::string type, std::function<std::string()> make)
    : type_(std::move(type)), make_(std::move(make)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    answer(conn, type_, make_());
    return true;
  }

private:
  std::string type_;
  std::function<std::string()> make_;
};

} // namespace

struct metrics_endpoint::handlers {
  std::vector<std::unique_ptr<get_handler>> all;
};

metrics_endpoint::metrics_endpoint() = default;
metrics_endpoint::~metrics_endpoint() = default;

result<std::unique_ptr<metrics_endpoint>>
metrics_endpoint::open(const endpoint& where, std::shared_ptr<prometheus::Registry> registry,
                       status_source status) {
  std::unique_ptr<metrics_endpoint> opened{new metrics_endpoint};
  try {
    opened->server_ = std::make_unique<CivetServer>(std::vector<std::string>{
      "listening_ports", listening_ports(where), "num_threads",
      std::to_string(server_threads)});
  } catch (const std::exception& e) {
    return error{fmt::format("cannot serve metrics on {} (--metrics-listen): the address is "
                             "in use or cannot be bound ({})", to_string(where), e.what())};
  }
  const auto ports = opened->server_->getListeningPorts();
  if (ports.empty())
    return error{fmt::format("cannot serve metrics on {} (--metrics-listen): no port opened",
                             to_string(where))};
  opened->port_ = static_cast<std::uint16_t>(ports.front());
  opened->handlers_ = std::make_unique<handlers>();
  auto& all = opened->handlers_->all;
  all.push_back(std::make_unique<get_handler>(
    "text/plain; version=0.0.4; charset=utf-8",
    [registry] { return prometheus::TextSerializer{}.Serialize(registry->Collect()); }));
  opened->server_->addHandler("/metrics", *all.back());
  if (status) {
    all.push_back(std::make_unique<get_handler>("application/json", status));
    opened->server_->addHandler("/status.json", *all.back());
    all.push_back(std::make_unique<get_handler>(
      "text/html; charset=utf-8", [status] { return render_dashboard(status()); }));
    opened->server_->addHandler("/$", *all.back());
  }
  return opened;
}

} // namespace strom::runtime
