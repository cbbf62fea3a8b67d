#define BOOST_TEST_MODULE transport_guarded_link
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "strom/log.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/transport/guarded_connect.hpp"
#include "strom/runtime/transport/guarded_port.hpp"
#include "support/basp_forger.hpp"
#include "support/doubling_peers.hpp"
#include "support/log_lines.hpp"
#include "support/loopback_socket.hpp"

// Real actor systems over loopback with the link guard between them and the network: honest
// peers talk through it, hostile and silent ones are cut off without anyone else noticing.

using namespace strom::runtime;
using strom::test::closed_within;
using strom::test::connect_loopback;
using strom::test::client;
using strom::test::served;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// Milliseconds since `start`, printable in test messages.
long long millis_since(steady::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
}

/// True when `fd` receives at least one byte within `limit`.
bool hears_within(int fd, std::chrono::milliseconds limit) {
  pollfd watched{fd, POLLIN, 0};
  if (::poll(&watched, 1, static_cast<int>(limit.count())) <= 0)
    return false;
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_PEEK) > 0;
}

/// A 32-byte BASP header claiming `claimed` payload bytes.
std::vector<unsigned char> header_claiming(std::uint8_t operation, std::uint32_t claimed) {
  std::vector<unsigned char> out(32, 0);
  out[0] = operation;
  for (int i = 0; i < 4; ++i)
    out[4 + i] = static_cast<unsigned char>(claimed >> (24 - 8 * i));
  return out;
}

/// An actor on `system` that counts the numbers it is sent, findable by its id as a remote
/// message's destination; stopped with this object.
struct counting_actor {
  explicit counting_actor(caf::actor_system& system) {
    handle = system.spawn([this]() -> caf::behavior {
      return {[this](std::int32_t) { ++received; }};
    });
    system.registry().put(handle.id(), caf::actor_cast<caf::strong_actor_ptr>(handle));
  }
  ~counting_actor() { caf::anon_send_exit(handle, caf::exit_reason::user_shutdown); }
  std::atomic<int> received{0};
  caf::actor handle;
};

/// A peer played by hand on a plaintext socket: it reads the server's handshake and answers
/// with a client handshake naming `self`.
struct hand_played_peer {
  hand_played_peer(std::uint16_t port, const caf::node_id& self)
    : fd(connect_loopback(port)) {
    const auto hello = strom::test::read_basp_message([this](void* bytes, std::size_t size) {
      return strom::test::receive_exactly(fd, bytes, size);
    });
    server = hello.empty() ? caf::node_id{} : strom::test::handshake_sender(hello);
    send(strom::test::client_handshake(self));
  }
  ~hand_played_peer() { ::close(fd); }
  void send(const strom::test::basp_bytes& bytes) {
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  int fd;
  caf::node_id server;  ///< what its handshake named
};

/// Hands out the last actor it was given: how two clients of one port learn of each other.
struct introducer_state {
  caf::actor introduced;
};

caf::behavior introducer(caf::stateful_actor<introducer_state>* self) {
  return {
    [self](caf::actor handle) {
      self->state.introduced = std::move(handle);
      return true;
    },
    [self](const std::string&) { return self->state.introduced; },
  };
}

/// A listening socket on loopback that never accepts: a peer that answers nothing.
struct silent_listener {
  silent_listener() : fd(strom::test::listen_loopback(8, port)) {}
  ~silent_listener() { ::close(fd); }
  std::uint16_t port = 0;  // declared first: the constructor's listen_loopback sets it
  int fd = -1;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_client_reaches_a_published_actor_through_both_guards) {
  served server;
  client peer;
  auto link = peer.connect(server.number());
  BOOST_REQUIRE_MESSAGE(link.ok(), (link.ok() ? std::string{} : link.err().message));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_AUTO_TEST_CASE(headers_claiming_4_gib_are_cut_off_and_the_port_serves_on) {
  served server;
  for (const std::uint8_t operation : {0, 1, 2}) {
    const int fd = connect_loopback(server.number());
    BOOST_REQUIRE(fd >= 0);
    const auto header = header_claiming(operation, 0xFFFFFFFFu);
    BOOST_REQUIRE(::send(fd, header.data(), header.size(), MSG_NOSIGNAL) == 32);
    BOOST_TEST(closed_within(fd, 2s));
    ::close(fd);
  }
  client peer;
  auto link = peer.connect(server.number());
  BOOST_REQUIRE_MESSAGE(link.ok(), (link.ok() ? std::string{} : link.err().message));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_AUTO_TEST_CASE(an_idle_connection_is_closed_at_the_handshake_deadline) {
  guard_limits limits;
  limits.handshake_deadline = 300ms;
  served server{limits};
  const int fd = connect_loopback(server.number());
  BOOST_REQUIRE(fd >= 0);
  const char few[3] = {1, 0, 0};
  ::send(fd, few, sizeof few, MSG_NOSIGNAL);
  const auto start = steady::now();
  BOOST_TEST(closed_within(fd, 3s));
  BOOST_TEST(millis_since(start) >= 250);
  ::close(fd);
}

BOOST_AUTO_TEST_CASE(accepting_pauses_while_the_waiting_cap_is_full) {
  guard_limits limits;
  limits.handshake_deadline = 600ms;
  limits.max_waiting = 4;
  served server{limits};
  std::vector<int> waiting;
  for (int i = 0; i < 4; ++i) {
    waiting.push_back(connect_loopback(server.number()));
    BOOST_REQUIRE(hears_within(waiting.back(), 2s));  // accepted: the server handshake came
  }
  const int queued = connect_loopback(server.number());  // the kernel queues it; nobody accepts
  BOOST_REQUIRE(queued >= 0);
  BOOST_TEST(!hears_within(queued, 300ms));
  BOOST_TEST(hears_within(queued, 3s));  // accepted once the four were cut off
  for (int fd : waiting) {
    BOOST_TEST(closed_within(fd, 2s));
    ::close(fd);
  }
  ::close(queued);
}

BOOST_AUTO_TEST_CASE(running_out_of_descriptors_backs_off_instead_of_spinning) {
  served server;
  std::vector<std::string> lines;
  std::mutex lines_mutex;
  strom::log::set_sink([&](strom::log::level, std::string_view line) {
    std::lock_guard<std::mutex> lock{lines_mutex};
    lines.emplace_back(line);
  });
  rlimit original{};
  BOOST_REQUIRE(::getrlimit(RLIMIT_NOFILE, &original) == 0);
  // Every free descriptor number taken: the guard's accept fails with EMFILE while peers
  // (a child process, with a descriptor table of its own) wait in the listen queue.
  std::vector<int> fillers;
  for (int fd = ::dup(0); fd >= 0; fd = ::dup(0))
    fillers.push_back(fd);
  const pid_t peers = ::fork();
  if (peers == 0) {
    for (int fd : fillers)
      ::close(fd);
    for (int i = 0; i < 4; ++i)
      connect_loopback(server.number());
    ::sleep(3);
    ::_exit(0);
  }
  std::this_thread::sleep_for(500ms);
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  std::this_thread::sleep_for(1s);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  for (int fd : fillers)
    ::close(fd);
  const auto cpu = [](const rusage& r) {
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec)
           + static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
  };
  BOOST_TEST(cpu(after) - cpu(before) < 0.3, "cpu seconds in 1 s: " << cpu(after) - cpu(before));
  ::waitpid(peers, nullptr, 0);
  strom::log::set_sink({});
  {
    std::lock_guard<std::mutex> lock{lines_mutex};
    const bool backed_off = std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
      return line.find("out of descriptors") != std::string::npos;
    });
    BOOST_TEST(backed_off);
  }
  client peer;
  auto link = peer.connect(server.number());
  BOOST_REQUIRE_MESSAGE(link.ok(), (link.ok() ? std::string{} : link.err().message));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_AUTO_TEST_CASE(a_silent_peer_is_named_within_the_connect_timeout) {
  silent_listener silent;
  client peer;
  connect_options options;
  options.timeout = 1500ms;
  const auto start = steady::now();
  auto link = peer.connect(silent.port, options);
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(millis_since(start) < 3000);
  const auto& message = link.err().message;
  BOOST_TEST(message.find("127.0.0.1:" + std::to_string(silent.port)) != std::string::npos,
             message);
  BOOST_TEST(message.find("sent no strom handshake") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(an_echoing_peer_is_not_taken_for_a_strom_peer) {
  silent_listener listening;
  std::atomic<bool> stop{false};
  std::thread echo{[&] {
    const int fd = ::accept(listening.fd, nullptr, nullptr);
    char buffer[4096];
    while (!stop) {
      pollfd watched{fd, POLLIN, 0};
      if (::poll(&watched, 1, 20) <= 0)
        continue;
      const auto got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0)
        break;
      ::send(fd, buffer, static_cast<std::size_t>(got), MSG_NOSIGNAL);
    }
    ::close(fd);
  }};
  client peer;
  auto link = peer.connect(listening.port);
  stop = true;
  echo.join();
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(link.err().message.find("answered, but it is not a strom test server")
               != std::string::npos, link.err().message);
}

BOOST_AUTO_TEST_CASE(a_closed_port_is_named) {
  std::uint16_t port = 0;
  {
    silent_listener gone;
    port = gone.port;
  }
  client peer;
  auto link = peer.connect(port);
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(link.err().message.find("nothing listens at 127.0.0.1:") != std::string::npos,
             link.err().message);
}

// A client that may wait (submit and attach, while a scheduler restarts) reaches a port that
// opens only after its first attempts were refused; without the wait it is refused at once.
BOOST_AUTO_TEST_CASE(a_client_waiting_while_refused_reaches_a_port_opened_later) {
  std::uint16_t port = 0;
  {
    silent_listener gone;
    port = gone.port;
  }
  client peer;
  BOOST_TEST(!peer.connect(port).ok());
  served later_server;  // its own port too; its doubler listens on `port` later
  std::unique_ptr<guarded_port> later;
  std::thread opener{[&] {
    std::this_thread::sleep_for(600ms);
    auto opened =
      guarded_port::open(later_server.system, later_server.doubling, {"127.0.0.1", port});
    if (opened.ok())
      later = std::move(*opened);
  }};
  connect_options options;
  options.wait_while_refused = 10s;
  const auto start = steady::now();
  auto link = peer.connect(port, options);
  opener.join();
  BOOST_REQUIRE_MESSAGE(link.ok(), (link.ok() ? std::string{} : link.err().message));
  BOOST_TEST((steady::now() - start >= 500ms));
  BOOST_TEST(peer.doubles(link->remote));
}

BOOST_AUTO_TEST_CASE(an_interrupted_connect_gives_up_at_once) {
  silent_listener silent;
  client peer;
  connect_options options;
  options.interrupted = [] { return true; };
  const auto start = steady::now();
  auto link = peer.connect(silent.port, options);
  BOOST_REQUIRE(!link.ok());
  BOOST_TEST(millis_since(start) < 500);
  BOOST_TEST(link.err().message.find("interrupted") != std::string::npos, link.err().message);
}

BOOST_AUTO_TEST_CASE(a_routed_message_naming_its_own_node_reaches_the_actor) {
  served server;
  counting_actor counter{server.system};
  const auto self = strom::test::made_up_node(4242);
  hand_played_peer peer{server.number(), self};
  BOOST_REQUIRE(peer.server == server.system.node());
  peer.send(strom::test::routed_message(server.system, self, peer.server, counter.handle.id(),
                                        caf::make_message(std::int32_t{7})));
  BOOST_TEST(strom::test::within_2_s([&] { return counter.received == 1; }));
}

BOOST_AUTO_TEST_CASE(a_routed_message_claiming_another_node_is_refused_and_reaches_no_actor) {
  strom::test::log_lines log;
  served server;
  counting_actor counter{server.system};
  hand_played_peer peer{server.number(), strom::test::made_up_node(4242)};
  BOOST_REQUIRE(peer.server == server.system.node());
  peer.send(strom::test::routed_message(server.system, strom::test::made_up_node(777),
                                        peer.server, counter.handle.id(),
                                        caf::make_message(std::int32_t{7})));
  BOOST_TEST(closed_within(peer.fd, 2s));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "routed message from node", "but it is node"}));
  std::this_thread::sleep_for(200ms);
  BOOST_TEST(counter.received == 0);
}

BOOST_AUTO_TEST_CASE(a_down_message_in_another_nodes_name_is_refused) {
  strom::test::log_lines log;
  served server;
  hand_played_peer peer{server.number(), strom::test::made_up_node(4242)};
  BOOST_REQUIRE(peer.server == server.system.node());
  peer.send(strom::test::down_message(strom::test::made_up_node(777), peer.server, 5));
  BOOST_TEST(closed_within(peer.fd, 2s));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "down message from node"}));
}

BOOST_AUTO_TEST_CASE(a_second_handshake_naming_another_node_is_refused) {
  strom::test::log_lines log;
  served server;
  hand_played_peer peer{server.number(), strom::test::made_up_node(4242)};
  BOOST_REQUIRE(peer.server == server.system.node());
  peer.send(strom::test::client_handshake(strom::test::made_up_node(777)));
  BOOST_TEST(closed_within(peer.fd, 2s));
  BOOST_TEST(log.has({"refused 127.0.0.1:", "client handshake names node", "its first named"}));
}

BOOST_AUTO_TEST_CASE(two_clients_talk_through_the_port_they_share) {
  // CAF routes between nodes without a link of their own through a node both reach: the
  // guards let the server pass on one client's messages to the other and back.
  strom::runtime::system_config config{true};
  caf::actor_system system{config};
  auto hub = system.spawn(introducer);
  auto port = guarded_port::open(system, hub, {"127.0.0.1", 0});
  BOOST_REQUIRE(port.ok());
  client a;
  client b;
  auto a_link = a.connect((*port)->port());
  auto b_link = b.connect((*port)->port());
  BOOST_REQUIRE(a_link.ok());
  BOOST_REQUIRE(b_link.ok());
  auto doubling = b.system.spawn(strom::test::doubler);
  caf::scoped_actor b_self{b.system};
  bool stored = false;
  b_self->request(b_link->remote, 5s, doubling).receive([&](bool ok) { stored = ok; },
                                                        [](caf::error&) {});
  BOOST_REQUIRE(stored);
  caf::scoped_actor a_self{a.system};
  caf::actor introduced;
  a_self->request(a_link->remote, 5s, std::string{"who"})
    .receive([&](const caf::actor& handle) { introduced = handle; }, [](caf::error&) {});
  BOOST_REQUIRE(introduced);
  BOOST_TEST((introduced.node() == b.system.node()));
  BOOST_TEST(a.doubles(introduced));
  caf::anon_send_exit(doubling, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);
  port->reset();
}
