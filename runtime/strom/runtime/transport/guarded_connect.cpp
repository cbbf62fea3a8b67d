#include "strom/runtime/transport/guarded_connect.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "strom/log.hpp"
#include "strom/runtime/transport/middleman_pair.hpp"

namespace strom::runtime {

namespace {

using clock = std::chrono::steady_clock;

/// How often a waiting client looks at its interruption flag and the guard's verdict.
constexpr auto poll_slice = std::chrono::milliseconds(50);
/// How long past the deadline a client waits for its guard's verdict: the guard closes a
/// silent peer at the same deadline on its own thread, and its word ("sent no strom
/// handshake") says more than a bare timeout. One slice: the guard wakes within a millisecond.
constexpr auto verdict_grace = poll_slice;
/// Pause before a new attempt at a handshake CAF's heartbeat tick cut short.
constexpr auto retry_pause = std::chrono::milliseconds(50);
/// Between attempts at a peer that refuses the connection (connect_options::wait_while_refused).
constexpr auto refused_pause = std::chrono::milliseconds(200);

/// Added when a plaintext client's peer closed the link during the handshake: a TLS endpoint
/// waits for a ClientHello that never comes and closes at its handshake deadline.
constexpr const char* plaintext_hint =
  " (a TLS endpoint closes plaintext peers: give --tls-ca, --tls-cert and --tls-key)";

/// What the guard's thread saw of the link while the client waits.
struct link_verdict {
  std::mutex mutex;
  std::optional<link_event> event;  ///< the last one
  std::string reason;
};

double seconds(std::chrono::milliseconds span) { return span.count() / 1000.0; }

bool interrupted(const connect_options& options) {
  return options.interrupted && options.interrupted();
}

/// Waits until `fd` finished connecting or the deadline passed; the connection's error code,
/// ETIMEDOUT or EINTR (interrupted).
int finish_connect(int fd, clock::time_point deadline, const connect_options& options) {
  while (clock::now() < deadline) {
    if (interrupted(options))
      return EINTR;
    pollfd watched{fd, POLLOUT, 0};
    if (::poll(&watched, 1, static_cast<int>(poll_slice.count())) > 0) {
      int code = 0;
      socklen_t length = sizeof code;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length);
      return code;
    }
  }
  return ETIMEDOUT;
}

/// A TCP connection to `where` within the deadline, or the errno of the last attempt and a
/// message in words.
result<int> connect_tcp_once(const endpoint& where, clock::time_point deadline,
                             const connect_options& options, int& last) {
  const auto name = to_string(where);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(where.port);
  if (int code = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found); code != 0)
    return error{fmt::format("cannot resolve '{}': {}", where.host, gai_strerror(code))};
  last = ECONNREFUSED;
  for (auto* candidate = found; candidate; candidate = candidate->ai_next) {
    const int fd = ::socket(candidate->ai_family,
                            candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    last = ::connect(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 ? 0 : errno;
    if (last == EINPROGRESS)
      last = finish_connect(fd, deadline, options);
    if (last == 0) {
      freeaddrinfo(found);
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    ::close(fd);
    if (last == EINTR || last == ETIMEDOUT)
      break;
  }
  freeaddrinfo(found);
  if (last == EINTR)
    return error{fmt::format("interrupted while connecting to {}", name)};
  if (last == ETIMEDOUT)
    return error{fmt::format("{} did not accept a connection within {} s", name,
                             seconds(options.timeout))};
  if (last == ECONNREFUSED)
    return error{fmt::format("nothing listens at {} (connection refused)", name)};
  return error{fmt::format("cannot connect to {}: {}", name, std::strerror(last))};
}

/// connect_tcp_once, tried again while the peer refuses for options.wait_while_refused; the
/// deadline moves with each new attempt.
result<int> connect_tcp(const endpoint& where, clock::time_point& deadline,
                        const connect_options& options) {
  const auto waiting_ends = clock::now() + options.wait_while_refused;
  bool told = false;
  for (;;) {
    int last = 0;
    auto connected = connect_tcp_once(where, deadline, options, last);
    if (connected || last != ECONNREFUSED || clock::now() + refused_pause >= waiting_ends
        || interrupted(options))
      return connected;
    if (!told) {
      log::info("{}; trying again for up to {} s", connected.err().message,
                seconds(options.wait_while_refused));
      told = true;
    }
    std::this_thread::sleep_for(refused_pause);
    deadline = clock::now() + options.timeout;
  }
}

} // namespace

/// One attempt of connect_guarded until `deadline`. `cut_by_tick` is set when CAF's middleman
/// closed the link at its heartbeat tick while the handshake was under way (see below): the
/// peer is merely slow, and a new attempt may succeed.
result<guarded_connection> connect_once(caf::actor_system& system, const endpoint& where,
                                        const char* role, const connect_options& options,
                                        clock::time_point& deadline, bool& cut_by_tick) {
  const auto name = to_string(where);
  auto outer = connect_tcp(where, deadline, options);
  if (!outer)
    return outer.err();
  auto pair = make_middleman_pair(system);
  if (!pair) {
    ::close(*outer);
    return pair.err();
  }
  auto verdict = std::make_shared<link_verdict>();
  auto limits = options.limits;
  limits.handshake_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - clock::now());
  auto guard = std::make_shared<link_guard>(limits);
  guard->attach(*outer, pair->guard_end, basp_sender::server, name,
                [verdict](link_event event, const std::string& why) {
                  std::lock_guard<std::mutex> lock{verdict->mutex};
                  verdict->event = event;
                  verdict->reason = why;
                });
  caf::scoped_actor self{system};
  // The broker sends our client handshake and answers with the published actor.
  self->send(basp_broker_of(system), caf::connect_atom_v, std::move(pair->middleman_end),
             where.port);
  // Why the link failed, in words; `middleman` is what CAF said, when it said anything.
  // CAF's middleman closes a connection still in its handshake at its first heartbeat tick
  // (connection_timeout; its last-seen time starts at zero): that is a silent peer too.
  const auto failure = [&](const caf::error& middleman) -> std::optional<error> {
    if (interrupted(options))
      return error{fmt::format("interrupted while connecting to {}", name)};
    std::lock_guard<std::mutex> lock{verdict->mutex};
    const auto event = verdict->event.value_or(link_event::admitted);
    cut_by_tick = event != link_event::silent && event != link_event::refused
                  && event != link_event::untrusted && middleman == caf::sec::connection_timeout;
    if (event == link_event::silent || cut_by_tick)
      return error{fmt::format("{} accepted the connection but sent no strom handshake: it is "
                               "not a strom {}, or it is overloaded", name, role)};
    switch (event) {
      case link_event::refused:
        return error{fmt::format("{} answered, but it is not a strom {} ({})", name, role,
                                 verdict->reason)};
      case link_event::untrusted:
        return error{fmt::format("{}: {}", name, verdict->reason)};
      case link_event::closed:
        if (verdict->reason == closed_by_peer)
          return error{fmt::format("{} closed the connection during the handshake: it is not "
                                   "a strom {}, or it turned us away{}", name, role,
                                   options.limits.tls.context ? "" : plaintext_hint)};
        break;
      default:
        break;
    }
    if (middleman)
      return error{fmt::format("{} answered, but it is not a strom {} ({})", name, role,
                               system.render(middleman))};
    if (clock::now() >= deadline + verdict_grace)
      return error{fmt::format("{} did not complete the strom handshake within {} s", name,
                               seconds(options.timeout))};
    return std::nullopt;
  };
  std::optional<result<guarded_connection>> outcome;
  while (!outcome) {
    self->receive(
      [&](caf::node_id&, caf::strong_actor_ptr& published, std::set<std::string>&) {
        if (published)
          outcome = guarded_connection{caf::actor_cast<caf::actor>(published), guard};
        else
          outcome = error{fmt::format("{} publishes no {}", name, role)};
      },
      [&](caf::error& refusal) { outcome = *failure(refusal); },
      caf::after(poll_slice) >> [&] {
        if (auto failed = failure(caf::error{}))
          outcome = std::move(*failed);
      });
  }
  return std::move(*outcome);
}

result<guarded_connection> connect_guarded(caf::actor_system& system, const endpoint& where,
                                           const char* role, const connect_options& options) {
  auto deadline = clock::now() + options.timeout;
  // CAF's first heartbeat tick, anywhere up to a second after the connect, ends a handshake
  // still under way: a busy peer (one loading data, on a loaded machine) can miss it. Such a
  // link is tried again while the timeout lasts.
  for (;;) {
    bool cut_by_tick = false;
    auto connected = connect_once(system, where, role, options, deadline, cut_by_tick);
    if (connected || !cut_by_tick || interrupted(options)
        || clock::now() + retry_pause >= deadline)
      return connected;
    log::info("{}: the strom handshake was cut short; trying again", to_string(where));
    std::this_thread::sleep_for(retry_pause);
  }
}

} // namespace strom::runtime
