#define BOOST_TEST_MODULE transport_basp_stream_check
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "strom/runtime/transport/basp_stream_check.hpp"
#include "support/basp_forger.hpp"

// The stream check in front of CAF's BASP reader: whole messages pass, claims above the caps,
// unknown operations and a wrong opening are refused at their header, before any payload.

using namespace strom::runtime;

namespace {

using bytes = std::vector<unsigned char>;

enum op : std::uint8_t {
  server_handshake = 0,
  client_handshake = 1,
  direct_message = 2,
  routed_message = 3,
  down_message = 5,
  heartbeat = 6,
};

void put_be(bytes& out, std::uint64_t value, int width) {
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8)
    out.push_back(static_cast<unsigned char>(value >> shift));
}

/// A BASP header (big-endian, as CAF 0.17 writes it) followed by `payload` zero bytes.
bytes message(std::uint8_t operation, std::uint32_t claimed, std::size_t payload,
              std::uint64_t operation_data = 0, std::uint64_t source = 0,
              std::uint64_t destination = 0) {
  bytes out{operation, 0, 0, 0};
  put_be(out, claimed, 4);
  put_be(out, operation_data, 8);
  put_be(out, source, 8);
  put_be(out, destination, 8);
  out.resize(out.size() + payload);
  return out;
}

/// `message` with its payload opening with `node` serialised, as handshakes and routed
/// messages open.
bytes naming(bytes message, std::initializer_list<caf::node_id> nodes) {
  std::vector<char> named;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), named};
  for (auto node : nodes)
    sink(node);
  std::copy(named.begin(), named.end(), message.begin() + 32);
  return message;
}

const caf::node_id peer_node = strom::test::made_up_node(11);
const caf::node_id this_node = strom::test::made_up_node(22);
const caf::node_id third_node = strom::test::made_up_node(33);

bytes client_hello() { return naming(message(client_handshake, 40, 40), {peer_node}); }
bytes direct(std::uint32_t size) { return message(direct_message, size, size, 0, 7, 9); }

bytes join(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& part : parts)
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

strom::result<std::size_t> feed(basp_stream_check& check, const bytes& stream) {
  return check.feed(stream.data(), stream.size());
}

} // namespace

BOOST_AUTO_TEST_CASE(a_client_handshake_admits_and_releases_whole_messages) {
  basp_stream_check check{basp_sender::client, {}};
  const auto stream = join({client_hello(), message(heartbeat, 0, 0), direct(100)});
  auto released = feed(check, stream);
  BOOST_REQUIRE(released.ok());
  BOOST_TEST(*released == stream.size());
  BOOST_TEST(check.admitted());
}

BOOST_AUTO_TEST_CASE(a_partial_message_is_held_back_until_it_is_whole) {
  basp_stream_check check{basp_sender::client, {}};
  const auto stream = join({client_hello(), direct(1000)});
  const auto cut = client_hello().size() + 500;
  auto first = check.feed(stream.data(), cut);
  BOOST_REQUIRE(first.ok());
  BOOST_TEST(*first == client_hello().size());
  auto rest = check.feed(stream.data() + cut, stream.size() - cut);
  BOOST_REQUIRE(rest.ok());
  BOOST_TEST(*rest == stream.size() - client_hello().size());
}

BOOST_AUTO_TEST_CASE(byte_by_byte_feeding_releases_the_same_bytes) {
  basp_stream_check check{basp_sender::client, {}};
  const auto stream = join({client_hello(), direct(3), message(heartbeat, 0, 0), direct(70)});
  std::size_t released = 0;
  for (const auto byte : stream) {
    auto step = check.feed(&byte, 1);
    BOOST_REQUIRE(step.ok());
    released += *step;
  }
  BOOST_TEST(released == stream.size());
}

BOOST_AUTO_TEST_CASE(a_header_claiming_4_gib_is_refused_at_the_header) {
  for (const std::uint8_t operation : {server_handshake, client_handshake, direct_message}) {
    basp_stream_check check{basp_sender::client, {}};
    const auto header = message(operation, 0xFFFFFFFFu, 0);
    auto verdict = feed(check, header);
    BOOST_REQUIRE(!verdict.ok());
    BOOST_TEST_INFO("operation " << int{operation} << ": " << verdict.err().message);
    BOOST_TEST(!check.admitted());
  }
  basp_stream_check check{basp_sender::client, {}};
  auto verdict = feed(check, message(client_handshake, 0xFFFFFFFFu, 0));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("4294967295") != std::string::npos, verdict.err().message);
}

BOOST_AUTO_TEST_CASE(a_message_above_the_cap_is_refused_after_admission) {
  basp_limits limits;
  limits.message_payload = 1000;
  basp_stream_check check{basp_sender::client, limits};
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  BOOST_TEST(feed(check, message(direct_message, 1000, 0, 0, 7, 9)).ok());
  basp_stream_check over{basp_sender::client, limits};
  BOOST_REQUIRE(feed(over, client_hello()).ok());
  auto verdict = feed(over, message(direct_message, 1001, 0, 0, 7, 9));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("1000-byte limit") != std::string::npos,
             verdict.err().message);
}

BOOST_AUTO_TEST_CASE(a_large_handshake_is_refused) {
  basp_stream_check check{basp_sender::client, {}};
  auto verdict = feed(check, message(client_handshake, 64 * 1024 + 1, 0));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("client handshake") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_peer_must_open_with_its_own_handshake) {
  basp_stream_check from_client{basp_sender::client, {}};
  auto direct_first = feed(from_client, direct(10));
  BOOST_REQUIRE(!direct_first.ok());
  BOOST_TEST(direct_first.err().message.find("instead of a client handshake")
               != std::string::npos, direct_first.err().message);
  // An echo server sends our own client handshake back.
  basp_stream_check from_server{basp_sender::server, {}};
  auto echoed = feed(from_server, client_hello());
  BOOST_REQUIRE(!echoed.ok());
  BOOST_TEST(echoed.err().message.find("instead of a server handshake") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_server_handshake_admits_a_server) {
  basp_stream_check check{basp_sender::server, {}};
  const auto hello = naming(message(server_handshake, 90, 90, 1), {peer_node});
  auto released = feed(check, hello);
  BOOST_REQUIRE(released.ok());
  BOOST_TEST(*released == hello.size());
  BOOST_TEST(check.admitted());
}

BOOST_AUTO_TEST_CASE(text_is_not_basp) {
  basp_stream_check check{basp_sender::server, {}};
  const std::string http = "HTTP/1.0 400 Bad request version\r\nServer: x\r\n\r\n";
  auto verdict = check.feed(reinterpret_cast<const unsigned char*>(http.data()), http.size());
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("no BASP operation") != std::string::npos,
             verdict.err().message);
}

BOOST_AUTO_TEST_CASE(headers_that_caf_would_reject_are_refused) {
  // A heartbeat with a payload, a direct message to nobody, an unknown operation.
  for (const auto& bad : {message(heartbeat, 4, 4), message(direct_message, 8, 8, 0, 7, 0),
                          message(7, 0, 0)}) {
    basp_stream_check check{basp_sender::client, {}};
    BOOST_REQUIRE(feed(check, client_hello()).ok());
    BOOST_TEST(!feed(check, bad).ok());
  }
}

BOOST_AUTO_TEST_CASE(a_refused_stream_stays_refused) {
  basp_stream_check check{basp_sender::client, {}};
  BOOST_REQUIRE(!feed(check, message(9, 0, 0)).ok());
  BOOST_TEST(!feed(check, client_hello()).ok());
  BOOST_TEST(!check.admitted());
}

namespace {

/// A routed message from `from` to `to`, with a few bytes of message after the node ids.
bytes routed(const caf::node_id& from, const caf::node_id& to) {
  return naming(message(routed_message, 80, 80, 0, 0, 9), {from, to});
}

} // namespace

BOOST_AUTO_TEST_CASE(a_handshake_must_name_a_node) {
  basp_stream_check check{basp_sender::client, {}};
  auto verdict = feed(check, message(client_handshake, 40, 40));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("its client handshake names no node id")
               != std::string::npos, verdict.err().message);
}

BOOST_AUTO_TEST_CASE(the_handshake_names_the_peers_origin) {
  basp_stream_check check{basp_sender::client, {}};
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  BOOST_TEST((check.origin() == peer_node));
}

BOOST_AUTO_TEST_CASE(a_later_handshake_naming_another_node_is_refused) {
  basp_stream_check check{basp_sender::client, {}};
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  BOOST_TEST(feed(check, client_hello()).ok());
  auto verdict = feed(check, naming(message(client_handshake, 40, 40), {third_node}));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("but its first named") != std::string::npos,
             verdict.err().message);
}

BOOST_AUTO_TEST_CASE(a_peer_that_connected_may_name_only_itself_as_a_source) {
  basp_stream_check check{basp_sender::client, {}};
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  BOOST_TEST(feed(check, routed(peer_node, third_node)).ok());
  auto verdict = feed(check, routed(third_node, this_node));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("it sent a routed message from node") != std::string::npos,
             verdict.err().message);
}

BOOST_AUTO_TEST_CASE(a_forged_source_is_refused_before_any_of_its_bytes_are_released) {
  basp_stream_check check{basp_sender::client, {}};
  const auto hello = client_hello();
  const auto stream = join({hello, routed(third_node, this_node)});
  std::size_t released = 0;
  bool refused = false;
  for (const auto byte : stream) {
    auto step = check.feed(&byte, 1);
    if (!step.ok()) {
      refused = true;
      break;
    }
    released += *step;
  }
  BOOST_TEST(refused);
  BOOST_TEST(released == hello.size());
}

BOOST_AUTO_TEST_CASE(the_peer_we_connected_to_may_pass_on_other_nodes_messages) {
  basp_stream_check check{basp_sender::server, {}};
  BOOST_REQUIRE(feed(check, naming(message(server_handshake, 90, 90, 1), {peer_node})).ok());
  BOOST_TEST(feed(check, routed(third_node, this_node)).ok());
}

BOOST_AUTO_TEST_CASE(a_down_message_from_another_node_is_refused) {
  basp_stream_check check{basp_sender::client, {}};
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  auto verdict = feed(check, naming(message(down_message, 80, 80, 0, 5, 0), {third_node,
                                                                          this_node}));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("down message from node") != std::string::npos,
             verdict.err().message);
}

BOOST_AUTO_TEST_CASE(a_peer_held_to_this_node_may_not_address_a_third) {
  basp_stream_check check{basp_sender::client, {}};
  check.only_to(this_node);
  BOOST_REQUIRE(feed(check, client_hello()).ok());
  BOOST_TEST(feed(check, routed(peer_node, this_node)).ok());
  auto verdict = feed(check, routed(peer_node, third_node));
  BOOST_REQUIRE(!verdict.ok());
  BOOST_TEST(verdict.err().message.find("a client may address only the node it connected to")
               != std::string::npos, verdict.err().message);
}
