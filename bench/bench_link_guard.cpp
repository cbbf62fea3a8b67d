// What the link guard costs a message between two nodes: round trips of a request through
// CAF's own middleman connection (remote_actor to a port the middleman listens on, the path
// before the guard) against the same through a guarded port and a guarded client connection
// (two guard threads, two more socket hops), and the same guarded link speaking mutual TLS
// (certificates from init_certificates in a temporary directory). Two actor systems in one
// process over loopback, alternating rounds; one JSON object per payload size with the median
// round trip of each, ratio = guarded / plain and tls_ratio = TLS / guarded.
//
//   bench_link_guard [--rounds N] [--trips N]   (defaults 5 and 2000)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <stdlib.h>

#include <filesystem>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/transport/guarded_port.hpp"

#include "json_line.hpp"
#include "median.hpp"

using strom::bench::median;
using strom::bench::print_json;
using strom::bench::rounded;

namespace {

using namespace strom::runtime;
using clock_type = std::chrono::steady_clock;

/// Payload sizes: a heartbeat-sized message, a sparse update frame of fashion_mlp at its
/// usual density (~13 KB), and a bitmap frame of a 4M-parameter model (1 MiB).
constexpr std::size_t payload_sizes[] = {64, 13 * 1024, 1024 * 1024};

caf::behavior echo() {
  return {[](const std::string& payload) { return payload; }};
}

/// Microseconds per round trip of `trips` requests carrying `payload`.
double micros_per_trip(caf::actor_system& system, const caf::actor& remote,
                       const std::string& payload, int trips) {
  caf::scoped_actor self{system};
  const auto start = clock_type::now();
  for (int i = 0; i < trips; ++i)
    self->request(remote, std::chrono::seconds(30), payload)
      .receive([](const std::string&) {},
               [](caf::error& failure) {
                 std::fprintf(stderr, "bench_link_guard: %s\n", to_string(failure).c_str());
                 std::exit(1);
               });
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / trips;
}

/// The identity of `name` in the certificate directory `dir`, or exits.
std::shared_ptr<const tls_context> identity(const std::string& dir, const std::string& name) {
  auto loaded = tls_context::load({dir + "/ca.pem", dir + "/" + name + ".pem",
                                   dir + "/" + name + ".key"});
  if (!loaded) {
    std::fprintf(stderr, "bench_link_guard: %s\n", loaded.err().message.c_str());
    std::exit(1);
  }
  return *loaded;
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int trips = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0)
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--trips") == 0)
      trips = std::max(1, std::atoi(argv[i + 1]));
  }
  system_config server_config{true};
  caf::actor_system server{server_config};
  system_config client_config{true};
  caf::actor_system client{client_config};
  auto echoing = server.spawn(echo);

  char dir_template[] = "/tmp/bench_link_guard_XXXXXX";
  const std::string certificates = ::mkdtemp(dir_template) ? dir_template : "";
  if (certificates.empty() || !init_certificates({certificates, {"server", "client"}, {}})) {
    std::fprintf(stderr, "bench_link_guard: cannot make certificates\n");
    return 1;
  }
  guard_limits tls_port_limits;
  tls_port_limits.tls.context = identity(certificates, "server");
  connect_options tls_client;
  tls_client.limits.tls.context = identity(certificates, "client");
  std::filesystem::remove_all(certificates);

  auto plain_port = server.middleman().publish(echoing, 0, "127.0.0.1");
  auto guarded = guarded_port::open(server, echoing, {"127.0.0.1", 0});
  auto tls_guarded = guarded_port::open(server, echoing, {"127.0.0.1", 0}, tls_port_limits);
  if (!plain_port || !guarded || !tls_guarded) {
    std::fprintf(stderr, "bench_link_guard: cannot listen on loopback\n");
    return 1;
  }
  auto plain = client.middleman().remote_actor("127.0.0.1", *plain_port);
  auto through_guard = connect_guarded(client, {"127.0.0.1", (*guarded)->port()}, "echo", {});
  auto through_tls = connect_guarded(client, {"127.0.0.1", (*tls_guarded)->port()}, "echo",
                                     tls_client);
  if (!plain || !through_guard || !through_tls) {
    std::fprintf(stderr, "bench_link_guard: cannot connect on loopback\n");
    return 1;
  }

  for (const auto size : payload_sizes) {
    const std::string payload(size, 'x');
    std::vector<double> plain_trips;
    std::vector<double> guarded_trips;
    std::vector<double> tls_trips;
    micros_per_trip(client, *plain, payload, trips / 10);  // warm-up
    micros_per_trip(client, through_guard->remote, payload, trips / 10);
    micros_per_trip(client, through_tls->remote, payload, trips / 10);
    for (int round = 0; round < rounds; ++round) {
      plain_trips.push_back(micros_per_trip(client, *plain, payload, trips));
      guarded_trips.push_back(micros_per_trip(client, through_guard->remote, payload, trips));
      tls_trips.push_back(micros_per_trip(client, through_tls->remote, payload, trips));
    }
    const double plain_us = median(plain_trips);
    const double guarded_us = median(guarded_trips);
    const double tls_us = median(tls_trips);
    print_json({{"bench", "link_guard"}, {"payload_bytes", size}, {"rounds", rounds},
                {"trips", trips}, {"plain_round_trip_us", rounded(plain_us, 1)},
                {"guarded_round_trip_us", rounded(guarded_us, 1)},
                {"ratio", rounded(guarded_us / plain_us, 3)},
                {"tls_round_trip_us", rounded(tls_us, 1)},
                {"tls_ratio", rounded(tls_us / guarded_us, 3)}});
  }
  caf::anon_send_exit(echoing, caf::exit_reason::user_shutdown);
  return 0;
}
