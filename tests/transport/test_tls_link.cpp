#define BOOST_TEST_MODULE transport_tls_link
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strom/log.hpp"
#include "strom/runtime/security/certificate_authority.hpp"
#include "strom/runtime/security/peer_registry.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "support/basp_forger.hpp"
#include "support/doubling_peers.hpp"
#include "support/log_lines.hpp"
#include "support/loopback_socket.hpp"
#include "support/scratch_dir.hpp"
#include "support/tls_socket.hpp"

// Guarded links that speak TLS, between real actor systems over loopback: members of one CA
// talk; another CA's certificate, a plaintext peer and a TLS peer at a plaintext port are
// refused with the reason named; bytes before a finished TLS handshake never reach the BASP
// check, and hostile BASP inside TLS is still cut off.

using namespace strom::runtime;
using strom::test::client;
using strom::test::served;
using strom::test::log_lines;
using strom::test::within_2_s;
using namespace std::chrono_literals;

namespace {

/// The certificates of two clusters: ours (scheduler, w1, alice) and another CA's (w1).
struct clusters {
  clusters() {
    BOOST_REQUIRE(init_certificates({(dir.path() / "ours").string(), {"scheduler", "w1"},
                                     {"alice"}}).ok());
    BOOST_REQUIRE(init_certificates({(dir.path() / "other").string(), {"w1"}, {}}).ok());
  }
  std::shared_ptr<const tls_context> identity(const std::string& cluster,
                                              const std::string& name) const {
    const auto base = dir.path() / cluster;
    auto loaded = tls_context::load({(base / "ca.pem").string(), (base / (name + ".pem")).string(),
                                     (base / (name + ".key")).string()});
    BOOST_REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? std::string{} : loaded.err().message));
    return *loaded;
  }
  guard_limits port_limits(const std::string& name, bool admit_clients = false) const {
    guard_limits limits;
    limits.tls.context = identity("ours", name);
    limits.tls.admit_clients = admit_clients;
    return limits;
  }
  /// The scheduler's port limits (clients admitted), its peers' certificates kept in `peers`.
  guard_limits recording_scheduler_limits(const std::shared_ptr<peer_registry>& peers) const {
    auto limits = port_limits("scheduler", true);
    limits.tls.peers = peers;
    return limits;
  }
  connect_options tls_client(const std::string& cluster, const std::string& name) const {
    connect_options options;
    options.limits.tls.context = identity(cluster, name);
    return options;
  }
  strom::test::scratch dir;
};

/// A peer played by hand inside TLS with `identity`: it reads the server's handshake and answers
/// with a client handshake naming `self`.
struct hand_played_tls_peer {
  hand_played_tls_peer(std::uint16_t port, const tls_context& identity, const caf::node_id& self)
    : socket(port, identity) {
    if (!socket.ok())
      return;
    const auto hello = strom::test::read_basp_message(
      [this](void* bytes, std::size_t size) { return socket.receive(bytes, size); });
    if (!hello.empty())
      server = strom::test::handshake_sender(hello);
    const auto answer = strom::test::client_handshake(self);
    socket.send(answer.data(), answer.size());
  }
  bool send(const strom::test::basp_bytes& bytes) { return socket.send(bytes.data(), bytes.size()); }
  strom::test::tls_socket socket;
  caf::node_id server;  ///< what its handshake named
};

std::string message_of(const strom::result<guarded_connection>& link) {
  return link.ok() ? std::string{"(connected)"} : link.err().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(members_of_one_ca_talk_over_tls, clusters) {
  served server{port_limits("scheduler")};
  client peer;
  auto link = peer.connect(server.number(), tls_client("ours", "w1"));
  BOOST_REQUIRE_MESSAGE(link.ok(), message_of(link));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_FIXTURE_TEST_CASE(a_certificate_of_another_ca_is_refused_naming_why, clusters) {
  log_lines log;
  served server{port_limits("scheduler")};
  client peer;
  auto link = peer.connect(server.number(), tls_client("other", "w1"));
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(contains(message_of(link), "TLS handshake failed: certificate not signed by the CA"),
             message_of(link));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "TLS handshake failed"}));
}

BOOST_FIXTURE_TEST_CASE(a_plaintext_client_is_refused_by_a_tls_port, clusters) {
  log_lines log;
  served server{port_limits("scheduler")};
  client peer;
  auto link = peer.connect(server.number());
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(contains(message_of(link), "a TLS endpoint closes plaintext peers"),
             message_of(link));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "speaks plaintext, not TLS"}));
}

BOOST_FIXTURE_TEST_CASE(a_tls_client_at_a_plaintext_port_says_it_speaks_plaintext, clusters) {
  served server;
  client peer;
  auto link = peer.connect(server.number(), tls_client("ours", "w1"));
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(contains(message_of(link), "TLS handshake failed: it speaks plaintext, not TLS"),
             message_of(link));
}

BOOST_FIXTURE_TEST_CASE(a_client_certificate_is_refused_where_only_nodes_are_admitted, clusters) {
  served node_port{port_limits("scheduler")};
  client peer;
  auto refused = peer.connect(node_port.number(), tls_client("ours", "alice"));
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(contains(message_of(refused), "closed the connection"), message_of(refused));
  served scheduler_port{port_limits("scheduler", true)};
  auto admitted = peer.connect(scheduler_port.number(), tls_client("ours", "alice"));
  BOOST_REQUIRE_MESSAGE(admitted.ok(), message_of(admitted));
  BOOST_TEST(peer.doubles(admitted->remote));
}

BOOST_FIXTURE_TEST_CASE(a_forged_basp_header_before_tls_never_reaches_the_basp_check, clusters) {
  log_lines log;
  served server{port_limits("scheduler")};
  const int fd = strom::test::connect_loopback(server.number());
  BOOST_REQUIRE(fd >= 0);
  const unsigned char header[32] = {1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
  ::send(fd, header, sizeof header, MSG_NOSIGNAL);
  BOOST_TEST(strom::test::closed_within(fd, 2s));
  ::close(fd);
  BOOST_TEST(log.has({"speaks plaintext, not TLS"}));
  BOOST_TEST(!log.has({"4294967295-byte payload"}));
}

BOOST_FIXTURE_TEST_CASE(a_tls_handshake_left_unfinished_is_closed_at_the_deadline, clusters) {
  log_lines log;
  auto limits = port_limits("scheduler");
  limits.handshake_deadline = 300ms;
  served server{limits};
  const int fd = strom::test::connect_loopback(server.number());
  BOOST_REQUIRE(fd >= 0);
  const unsigned char record_start[3] = {22, 3, 1};  // a TLS record that never goes on
  ::send(fd, record_start, sizeof record_start, MSG_NOSIGNAL);
  BOOST_TEST(strom::test::closed_within(fd, 3s));
  ::close(fd);
  BOOST_TEST(log.has({"no TLS handshake within 300 ms"}));
}

BOOST_FIXTURE_TEST_CASE(a_4_gib_header_inside_tls_is_cut_off_and_the_port_serves_on, clusters) {
  log_lines log;
  served server{port_limits("scheduler")};
  {
    strom::test::tls_socket attacker{server.number(), *identity("ours", "w1")};
    BOOST_REQUIRE(attacker.ok());
    const unsigned char header[32] = {1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    BOOST_REQUIRE(attacker.send(header, sizeof header));
    BOOST_TEST(attacker.closed_within(2s));
  }
  BOOST_TEST(log.has({"4294967295-byte payload"}));
  client peer;
  auto link = peer.connect(server.number(), tls_client("ours", "w1"));
  BOOST_REQUIRE_MESSAGE(link.ok(), message_of(link));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_FIXTURE_TEST_CASE(the_registry_holds_each_peers_certificate_by_node_id_while_linked,
                        clusters) {
  auto peers = std::make_shared<peer_registry>();
  served server{recording_scheduler_limits(peers)};
  client alice;
  {
    auto link = alice.connect(server.number(), tls_client("ours", "alice"));
    BOOST_REQUIRE_MESSAGE(link.ok(), message_of(link));
    // The server's guard reads the client's handshake after the client has the server's.
    BOOST_REQUIRE(within_2_s([&] { return peers->find(alice.system.node()).has_value(); }));
    const auto known = peers->find(alice.system.node());
    BOOST_TEST(known->name == "alice");
    BOOST_TEST((known->role == peer_role::client));
    BOOST_TEST(contains(join_refusal(*peers, alice.system.node(), "alice").value_or(""),
                        "certificate of 'alice' has role client; joining needs a node "
                        "certificate"));
  }
  // The link closed with its guard: the peer is forgotten.
  BOOST_TEST(within_2_s([&] { return !peers->find(alice.system.node()).has_value(); }));
}

BOOST_FIXTURE_TEST_CASE(a_client_certificate_may_not_route_a_message_to_a_third_node, clusters) {
  log_lines log;
  served server{port_limits("scheduler", true)};
  const auto third = strom::test::made_up_node(777);
  const auto to_third = [&](const caf::node_id& from) {
    return strom::test::routed_message(server.system, from, third, 1,
                                       caf::make_message(std::int32_t{7}));
  };
  // A node certificate's holder may ask the scheduler to pass a message on.
  hand_played_tls_peer node{server.number(), *identity("ours", "w1"),
                            strom::test::made_up_node(4242)};
  BOOST_REQUIRE(node.server == server.system.node());
  BOOST_REQUIRE(node.send(to_third(strom::test::made_up_node(4242))));
  BOOST_TEST(!node.socket.closed_within(500ms));
  // A client's holder talks to the scheduler alone.
  hand_played_tls_peer alice{server.number(), *identity("ours", "alice"),
                             strom::test::made_up_node(4343)};
  BOOST_REQUIRE(alice.server == server.system.node());
  BOOST_REQUIRE(alice.send(to_third(strom::test::made_up_node(4343))));
  BOOST_TEST(alice.socket.closed_within(2s));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "routed message for node",
                      "a client may address only the node it connected to"}));
}

BOOST_FIXTURE_TEST_CASE(a_handshake_claiming_a_linked_node_under_another_name_is_refused,
                        clusters) {
  log_lines log;
  auto peers = std::make_shared<peer_registry>();
  served server{recording_scheduler_limits(peers)};
  client w1;
  auto link = w1.connect(server.number(), tls_client("ours", "w1"));
  BOOST_REQUIRE_MESSAGE(link.ok(), message_of(link));
  BOOST_REQUIRE(within_2_s([&] { return peers->find(w1.system.node()).has_value(); }));
  hand_played_tls_peer alice{server.number(), *identity("ours", "alice"), w1.system.node()};
  BOOST_TEST(alice.socket.closed_within(2s));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "which is linked as 'w1'"}));
  // w1 keeps its standing and its link.
  BOOST_TEST(peers->find(w1.system.node())->name == "w1");
  BOOST_TEST((peers->find(w1.system.node())->role == peer_role::node));
  BOOST_TEST(w1.doubles(link->remote));
  // #40: the certificate binds the names w1 joins under: w1 (or w1/..., where processes share
  // one certificate), never another node's name or an invented one.
  BOOST_TEST(!join_refusal(*peers, w1.system.node(), "w1"));
  BOOST_TEST(!join_refusal(*peers, w1.system.node(), "w1/host-a:41"));
  for (const auto* other : {"impostor", "w2", "w10", "w1/", "w"})
    BOOST_TEST(contains(join_refusal(*peers, w1.system.node(), other).value_or(""),
                        std::string{"node '"} + other + "' presents the certificate of 'w1'"),
               other);
}
