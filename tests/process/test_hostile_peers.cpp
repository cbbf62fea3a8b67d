#define BOOST_TEST_MODULE process_hostile_peers
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <vector>
#include <fstream>
#include <thread>

#include "cluster_processes.hpp"
#include "support/loopback_socket.hpp"

// Real `strom` processes against hostile and confused peers on 127.0.0.1: a scheduler keeps
// its job and its memory while strangers send forged headers; clients pointed at something
// that is not a scheduler say so and end, and Ctrl-C ends them while they connect.

using namespace strom::test;

namespace {

/// A short job on three worker processes.
constexpr const char* job_epochs = "2";
constexpr auto job_limit = 120'000ms;
/// The bar: a scheduler under forged headers stays below this resident size.
constexpr long resident_bar_kib = 200 * 1024;
/// The attack of issue 16: connections that send a few bytes and go idle.
constexpr int idle_count = 200;
/// link_guard's default handshake deadline.
constexpr auto handshake_deadline = 5s;
/// How long a client may take to give up on a peer that is not a scheduler (the bar is 15 s).
constexpr auto give_up_limit = 15'000ms;

/// A stranger's attack: connect, read the server's greeting, send a 32-byte BASP header of
/// `operation` claiming a 4 GiB payload; true when the scheduler then closed the connection.
bool forged_header_is_cut_off(std::uint16_t port, std::uint8_t operation) {
  const int fd = connect_loopback(port);
  if (fd < 0)
    return false;
  unsigned char header[32] = {operation, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
  ::send(fd, header, sizeof header, MSG_NOSIGNAL);
  const bool closed = closed_within(fd, 5s);
  ::close(fd);
  return closed;
}

/// A loopback listener; `echo` answers every byte it gets back, else it never accepts and
/// keeps one connection queued so that later connection attempts hang in SYN_SENT.
class fake_peer {
public:
  explicit fake_peer(bool echo) {
    listener_ = listen_loopback(0, port_);
    if (echo)
      thread_ = std::thread{[this] { serve_echo(); }};
    else
      filler_ = connect_loopback(port_);
  }
  ~fake_peer() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
    if (filler_ >= 0)
      ::close(filler_);
    ::close(listener_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

private:
  void serve_echo() {
    std::vector<int> peers;
    char buffer[4096];
    while (!stop_) {
      std::vector<pollfd> watched{{listener_, POLLIN, 0}};
      for (int fd : peers)
        watched.push_back({fd, POLLIN, 0});
      if (::poll(watched.data(), watched.size(), 20) <= 0)
        continue;
      if (watched[0].revents & POLLIN)
        peers.push_back(::accept(listener_, nullptr, nullptr));
      for (std::size_t i = 1; i < watched.size(); ++i)
        if (watched[i].revents & POLLIN) {
          const auto got = ::recv(watched[i].fd, buffer, sizeof buffer, 0);
          if (got > 0)
            ::send(watched[i].fd, buffer, static_cast<std::size_t>(got), MSG_NOSIGNAL);
        }
    }
    for (int fd : peers)
      ::close(fd);
  }

  int listener_ = -1;
  int filler_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_three_node_job_completes_while_forged_4_gib_headers_hit_the_scheduler) {
  local_cluster cluster{3};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--epochs", job_epochs,
                               "--metrics-out", metrics.string()},
                              "submit");
  std::this_thread::sleep_for(1s);
  const auto port = port_of(cluster.address());
  for (const std::uint8_t operation : {0, 1, 2, 1, 2})
    BOOST_TEST(forged_header_is_cut_off(port, operation), "operation " << int{operation});
  auto status = submit->wait(job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), submit->transcript());
  BOOST_TEST(*status == 0, submit->transcript() << cluster.scheduler().transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "nodes") == 3.0, json);
  const auto log = cluster.scheduler().err();
  BOOST_TEST(!contains(log, "lost"), log);
  BOOST_TEST(contains(log, "4294967295-byte payload"), log);
  const auto peak = status_kib(cluster.scheduler().pid(), "VmHWM");
  BOOST_TEST_MESSAGE("scheduler peak resident " << peak << " KiB");
  BOOST_TEST(peak > 0);
  BOOST_TEST(peak < resident_bar_kib, "scheduler peak resident " << peak << " KiB");
}

BOOST_AUTO_TEST_CASE(idle_half_open_connections_are_closed_within_the_handshake_deadline) {
  local_cluster cluster{0};
  const auto port = port_of(cluster.address());
  const auto idle = idle_connections(port, idle_count, {1, 0, 0});
  BOOST_TEST(closed_together_within(idle, handshake_deadline + 2s) == idle.size());
  auto status = cluster.command({"status"}, "status", give_up_limit);
  BOOST_TEST(status.status == 0, status.err);
}

BOOST_AUTO_TEST_CASE(status_against_an_echo_server_says_it_is_not_a_scheduler) {
  scratch dir;
  fake_peer echo{true};
  // run_strom fails the test if it takes longer than the limit.
  auto status = run_strom({"status", "--to", echo.address()}, dir.path(), "status", give_up_limit);
  BOOST_TEST(status.status == 1);
  BOOST_TEST(contains(status.err, echo.address() + " answered, but it is not a strom scheduler"),
             status.err);
}

BOOST_AUTO_TEST_CASE(a_node_joining_an_echo_server_ends_with_a_message) {
  scratch dir;
  fake_peer echo{true};
  auto join = run_strom({"node", "--join", echo.address()}, dir.path(), "join", give_up_limit);
  BOOST_TEST(join.status == 1);
  BOOST_TEST(contains(join.err, "not a strom scheduler"), join.err);
}

BOOST_AUTO_TEST_CASE(a_connection_that_is_never_accepted_ends_at_the_connect_timeout) {
  scratch dir;
  fake_peer stuck{false};
  auto status = run_strom({"status", "--to", stuck.address(), "--connect-timeout", "1000"},
                          dir.path(), "status", give_up_limit);
  BOOST_TEST(status.status == 1);
  BOOST_TEST(contains(status.err, "did not accept a connection within 1 s"), status.err);
}

BOOST_AUTO_TEST_CASE(sigint_ends_a_node_while_it_connects) {
  scratch dir;
  fake_peer stuck{false};
  child join{{"node", "--join", stuck.address(), "--connect-timeout", "600000"}, dir.path(),
             "join"};
  std::this_thread::sleep_for(1s);
  join.signal(SIGINT);
  auto status = join.wait(3s);
  BOOST_REQUIRE_MESSAGE(status.has_value(), join.transcript());
  BOOST_TEST(*status == 1);
  BOOST_TEST(contains(join.err(), "interrupted while connecting"), join.transcript());
}
