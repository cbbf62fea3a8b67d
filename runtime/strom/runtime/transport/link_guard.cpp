#include "strom/runtime/transport/link_guard.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "strom/log.hpp"
#include "strom/runtime/transport/endpoint.hpp"
#include "strom/runtime/transport/tls_session.hpp"

namespace strom::runtime {

namespace {

using clock = std::chrono::steady_clock;

/// Bytes read from a socket at a time: a typical sparse update frame fits whole.
constexpr std::size_t read_chunk = 64 * 1024;

/// Backlog toward one side beyond which the guard stops reading the other: the slower side
/// then holds the sender back through TCP instead of the guard's memory.
constexpr std::size_t backlog_limit = 4 * 1024 * 1024;

/// Pause before accepting again after the process ran out of descriptors.
constexpr auto descriptor_backoff = std::chrono::milliseconds(100);

/// epoll tags: link id * 2 + side; id 0 is the guard's own listener (side 0) and wake-up
/// eventfd (side 1).
constexpr std::uint64_t listener_tag = 0;
constexpr std::uint64_t wake_tag = 1;

std::string describe_peer(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    return to_string(endpoint{text, ntohs(v4.sin_port)});
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    return to_string(endpoint{text, ntohs(v6.sin6_port)});
  }
  return "a peer";
}

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

/// Bytes waiting to go one way: appended at the back, sent from the front. What was sent is
/// dropped by moving an offset, the buffer compacted once that passes half of it: a message of
/// megabytes sent in socket-buffer pieces would otherwise move its whole rest after each piece.
class byte_queue {
public:
  const unsigned char* data() const noexcept { return bytes_.data() + head_; }
  std::size_t size() const noexcept { return bytes_.size() - head_; }
  bool empty() const noexcept { return size() == 0; }
  void append(const unsigned char* from, std::size_t count) {
    bytes_.insert(bytes_.end(), from, from + count);
  }
  void drop_front(std::size_t count) noexcept {
    head_ += count;
    if (head_ == bytes_.size()) {
      bytes_.clear();
      head_ = 0;
    } else if (head_ >= bytes_.size() / 2) {
      bytes_.erase(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

private:
  std::vector<unsigned char> bytes_;
  std::size_t head_ = 0;  ///< bytes_ before it were sent
};

} // namespace

struct link_guard::loop {
  struct link {
    int outer = -1;
    int inner = -1;
    std::string peer;
    basp_stream_check check;
    byte_queue to_inner;   ///< read from the peer; the first `releasable` checked
    std::size_t releasable = 0;
    byte_queue to_outer;   ///< from the middleman, not yet sent to the peer
    clock::time_point admit_by;
    bool admitted = false;
    link_observer observer;
    std::uint32_t outer_events = 0;  ///< what epoll watches now, to skip needless changes
    std::uint32_t inner_events = 0;
    std::unique_ptr<tls_session> tls;  ///< null on a plaintext link
    bool tls_wants_write = false;      ///< TLS waits for the socket to take bytes
    std::optional<caf::node_id> node;  ///< as recorded in limits.tls.peers
  };

  explicit loop(guard_limits guard) : limits(guard) {
    poller = epoll_create1(EPOLL_CLOEXEC);
    wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = wake_tag;
    epoll_ctl(poller, EPOLL_CTL_ADD, wake, &event);
    thread = std::thread{[this] { run(); }};
  }

  ~loop() {
    post([this] { stopping = true; });
    thread.join();
    for (auto& [id, entry] : links)
      close_fds(entry);
    if (listener >= 0)
      ::close(listener);
    ::close(wake);
    ::close(poller);
  }

  /// Runs `command` on the guard's thread.
  void post(std::function<void()> command) {
    {
      std::lock_guard<std::mutex> guard{commands_mutex};
      commands.push_back(std::move(command));
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(wake, &one, sizeof one);
  }

  // -- the thread --------------------------------------------------------------------------

  void run() {
    // OpenSSL writes to a TLS peer's socket with write(), which raises SIGPIPE when the peer
    // has gone and would end the process. Blocked on this thread, the write fails with EPIPE
    // instead (the signal stays pending here, harmless), without touching the host's handlers.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    std::vector<epoll_event> events(256);
    while (!stopping) {
      const int ready = epoll_wait(poller, events.data(), static_cast<int>(events.size()),
                                   wait_millis());
      for (int i = 0; i < ready; ++i)
        dispatch(events[i]);
      expire_waiting(clock::now());
      resume_accepting(clock::now());
    }
  }

  int wait_millis() const {
    auto next = clock::time_point::max();
    if (waiting_links > 0)  // only then is there a deadline among the links
      for (const auto& [id, entry] : links)
        if (!entry.admitted)
          next = std::min(next, entry.admit_by);
    if (listener >= 0 && accept_paused && resume_at)
      next = std::min(next, *resume_at);
    if (next == clock::time_point::max())
      return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(next - clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
  }

  void dispatch(const epoll_event& event) {
    const auto tag = event.data.u64;
    if (tag == wake_tag)
      return run_commands();
    if (tag == listener_tag)
      return accept_peers();
    const auto id = tag / 2;
    auto found = links.find(id);
    if (found == links.end())
      return;
    auto& entry = found->second;
    const bool outer_side = tag % 2 == 0;
    const bool readable = (event.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0;
    const bool writable = (event.events & EPOLLOUT) != 0;
    bool alive = true;
    if (outer_side) {
      bool handshake_done_now = false;
      if (entry.tls && !entry.tls->established()) {
        if (!advance_handshake(id, entry))
          return;
        if (!entry.tls->established())
          return watch(id, entry);
        handshake_done_now = true;  // what the middleman said meanwhile may go out now
      }
      if (writable || handshake_done_now)
        alive = flush_outer(entry);
      if (alive && (readable || handshake_done_now))
        alive = read_outer(id, entry);
    } else {
      if (writable)
        alive = flush_inner(entry);
      if (alive && readable)
        alive = read_inner(entry);
    }
    if (!alive)
      return drop(id, link_event::closed, outer_side ? closed_by_peer : "closed by this process");
    if (links.count(id))  // a refused peer's link is gone already
      watch(id, entry);
  }

  void run_commands() {
    std::uint64_t count = 0;
    [[maybe_unused]] auto read = ::read(wake, &count, sizeof count);
    std::vector<std::function<void()>> pending;
    {
      std::lock_guard<std::mutex> guard{commands_mutex};
      pending.swap(commands);
    }
    for (auto& command : pending)
      command();
  }

  // -- links -------------------------------------------------------------------------------

  void add_link(int outer, int inner, basp_sender sender, std::string peer,
                link_observer observer) {
    const auto id = next_id++;
    link entry{outer, inner, std::move(peer), basp_stream_check{sender, limits.basp}, {}, 0, {},
               {}, false, {}, 0, 0, nullptr, false, std::nullopt};
    entry.admit_by = clock::now() + limits.handshake_deadline;
    entry.observer = std::move(observer);
    if (limits.tls.context)
      entry.tls = std::make_unique<tls_session>(
        *limits.tls.context, outer,
        sender == basp_sender::client ? tls_session::side::accepting
                                      : tls_session::side::connecting);
    for (int fd : {outer, inner}) {
      epoll_event event{};
      event.data.u64 = id * 2 + (fd == inner ? 1 : 0);
      epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event);
    }
    auto& stored = links.emplace(id, std::move(entry)).first->second;
    ++waiting_links;
    // The connecting side speaks first in TLS (its ClientHello).
    if (stored.tls && sender == basp_sender::server && !advance_handshake(id, stored))
      return;
    watch(id, stored);
  }

  /// Takes the TLS handshake as far as the socket allows; false when it failed (the link is
  /// gone then) or admitted a certificate this guard does not accept.
  bool advance_handshake(std::uint64_t id, link& entry) {
    const auto outcome = entry.tls->handshake();
    entry.tls_wants_write = outcome == tls_session::status::want_write;
    if (outcome == tls_session::status::want_read || outcome == tls_session::status::want_write)
      return true;
    if (outcome != tls_session::status::done) {
      refuse(id, "TLS handshake failed: " + entry.tls->failure(), link_event::untrusted);
      return false;
    }
    const auto& peer = entry.tls->peer();
    if (peer.role != peer_role::node && !limits.tls.admit_clients) {
      refuse(id, fmt::format("the certificate of '{}' has role {}; only node certificates are "
                             "admitted here", peer.name, to_string(peer.role)),
             link_event::untrusted);
      return false;
    }
    if (peer.role == peer_role::client)
      entry.check.only_to(limits.tls.self);
    return true;
  }

  /// Records the peer's node id (its handshake's) with its certificate; false when the
  /// registry refused the claim (the link is gone then).
  bool record_peer(std::uint64_t id, link& entry) {
    if (!entry.tls || !limits.tls.peers)
      return true;
    if (auto refusal = limits.tls.peers->admit(entry.check.origin(), entry.tls->peer())) {
      refuse(id, *refusal);
      return false;
    }
    entry.node = entry.check.origin();
    return true;
  }

  /// Appends at most read_chunk bytes from `fd` to `bytes`: recv's result. Reads into the
  /// loop's scratch buffer, so that a small message costs its own bytes, not a zeroed chunk.
  ssize_t receive_into(int fd, byte_queue& bytes) {
    const auto got = ::recv(fd, scratch.data(), scratch.size(), 0);
    if (got > 0)
      bytes.append(scratch.data(), static_cast<std::size_t>(got));
    return got;
  }

  /// What the peer sent, decrypted on a TLS link (at most read_chunk bytes), appended to
  /// to_inner: recv's result; a TLS failure is -1 with entry.tls->failure() set.
  ssize_t receive_outer(link& entry) {
    if (!entry.tls)
      return receive_into(entry.outer, entry.to_inner);
    std::size_t total = 0;
    for (;;) {
      std::size_t moved = 0;
      const auto outcome = entry.tls->read(scratch.data(), scratch.size() - total, moved);
      entry.to_inner.append(scratch.data(), moved);
      total += moved;
      // One SSL_read yields one record (16 KiB at most): a few fill a chunk.
      if (outcome == tls_session::status::done && total < scratch.size())
        continue;
      if (total > 0)
        return static_cast<ssize_t>(total);
      if (outcome == tls_session::status::closed)
        return 0;
      entry.tls_wants_write = outcome == tls_session::status::want_write;
      errno = outcome == tls_session::status::failed ? EPROTO : EAGAIN;
      return -1;
    }
  }

  /// Reads what the peer sent and passes on its complete, checked messages.
  bool read_outer(std::uint64_t id, link& entry) {
    const auto before = entry.to_inner.size();
    const auto got = receive_outer(entry);
    if (got < 0 && entry.tls && !entry.tls->failure().empty()) {
      // Before the BASP handshake this is still the TLS handshake's end (in TLS 1.3 the
      // server judges the client's certificate after the client thinks it is done).
      if (entry.admitted)
        refuse(id, "TLS: " + entry.tls->failure());
      else
        refuse(id, "TLS handshake failed: " + entry.tls->failure(), link_event::untrusted);
      return true;
    }
    if (got < 0)
      return would_block(errno);
    if (got == 0) {
      flush_inner(entry);  // the peer closed: its last whole messages still go in
      return false;
    }
    auto checked = entry.check.feed(entry.to_inner.data() + before, static_cast<std::size_t>(got));
    if (!checked && !entry.tls && before == 0 && entry.to_inner.data()[0] == tls_handshake_record) {
      // A TLS peer at a plaintext end: tell it so in its own protocol (best effort).
      [[maybe_unused]] auto sent = ::send(entry.outer, plaintext_endpoint_alert,
                                          sizeof plaintext_endpoint_alert, MSG_NOSIGNAL);
    }
    if (!checked) {
      refuse(id, checked.err().message);
      return true;  // refuse dropped the link already
    }
    entry.releasable += *checked;
    if (!entry.admitted && entry.check.admitted()) {
      if (!record_peer(id, entry))
        return true;
      entry.admitted = true;
      --waiting_links;
      if (entry.observer)
        entry.observer(link_event::admitted, "");
      if (accept_paused && !resume_at)
        resume_accepting(clock::now());
    }
    return flush_inner(entry);
  }

  bool read_inner(link& entry) {
    const auto got = receive_into(entry.inner, entry.to_outer);
    if (got < 0)
      return would_block(errno);
    // Also when the middleman closed (0): what it said last still goes out.
    return flush_outer(entry) && got > 0;
  }

  static bool send_front(int fd, byte_queue& bytes, std::size_t count, std::size_t& sent) {
    sent = 0;
    while (sent < count) {
      const auto wrote = ::send(fd, bytes.data() + sent, count - sent, MSG_NOSIGNAL);
      if (wrote < 0) {
        if (would_block(errno))
          break;
        return false;
      }
      sent += static_cast<std::size_t>(wrote);
    }
    bytes.drop_front(sent);
    return true;
  }

  bool flush_inner(link& entry) {
    std::size_t sent = 0;
    const bool ok = send_front(entry.inner, entry.to_inner, entry.releasable, sent);
    entry.releasable -= sent;
    return ok;
  }

  bool flush_outer(link& entry) {
    std::size_t sent = 0;
    if (!entry.tls)
      return send_front(entry.outer, entry.to_outer, entry.to_outer.size(), sent);
    if (!entry.tls->established())
      return true;  // the middleman's first words wait for the TLS handshake
    entry.tls_wants_write = false;
    auto outcome = tls_session::status::done;
    while (sent < entry.to_outer.size() && outcome == tls_session::status::done) {
      std::size_t moved = 0;
      outcome = entry.tls->write(entry.to_outer.data() + sent, entry.to_outer.size() - sent,
                                 moved);
      sent += moved;
    }
    entry.to_outer.drop_front(sent);
    entry.tls_wants_write = outcome == tls_session::status::want_write;
    return outcome == tls_session::status::done || outcome == tls_session::status::want_read
           || outcome == tls_session::status::want_write;
  }

  /// Sets what epoll watches on both sockets from what is pending.
  void watch(std::uint64_t id, link& entry) {
    const bool handshaking = entry.tls && !entry.tls->established();
    const bool outer_writes = entry.tls_wants_write || (!handshaking && !entry.to_outer.empty());
    const std::uint32_t outer = (handshaking || entry.releasable < backlog_limit ? EPOLLIN : 0u)
                                | (outer_writes ? EPOLLOUT : 0u);
    const std::uint32_t inner = (entry.to_outer.size() < backlog_limit ? EPOLLIN : 0u)
                                | (entry.releasable == 0 ? 0u : EPOLLOUT);
    change(entry.outer, id * 2, entry.outer_events, outer);
    change(entry.inner, id * 2 + 1, entry.inner_events, inner);
  }

  void change(int fd, std::uint64_t tag, std::uint32_t& current, std::uint32_t wanted) {
    if (current == wanted)
      return;
    epoll_event event{};
    event.events = wanted;
    event.data.u64 = tag;
    epoll_ctl(poller, EPOLL_CTL_MOD, fd, &event);
    current = wanted;
  }

  void refuse(std::uint64_t id, const std::string& reason,
              link_event event = link_event::refused) {
    auto& entry = links.at(id);
    if (!entry.observer)  // an observer reports the refusal in its own words
      log::warning("refused {}: {}; disconnected", entry.peer, reason);
    drop(id, event, reason);
  }

  void drop(std::uint64_t id, link_event event, const std::string& reason) {
    auto found = links.find(id);
    if (found == links.end())
      return;
    // The observer hears why before the middleman sees the close, so a client waiting on
    // both reports the reason, not the bare disconnection.
    if (found->second.observer)
      found->second.observer(event, reason);
    if (!found->second.admitted)
      --waiting_links;
    if (found->second.node)
      limits.tls.peers->release(*found->second.node);
    close_fds(found->second);
    links.erase(found);
    if (accept_paused && !resume_at)
      resume_accepting(clock::now());
  }

  static void close_fds(link& entry) {
    ::close(entry.outer);
    ::close(entry.inner);
  }

  void expire_waiting(clock::time_point now) {
    if (waiting_links == 0)
      return;
    std::vector<std::uint64_t> late;
    for (const auto& [id, entry] : links)
      if (!entry.admitted && entry.admit_by <= now)
        late.push_back(id);
    for (auto id : late) {
      const auto& entry = links.at(id);
      const auto deadline = limits.handshake_deadline.count();
      refuse(id,
             entry.tls && !entry.tls->established()
               ? fmt::format("no TLS handshake within {} ms: it speaks plaintext, or nothing",
                             deadline)
               : fmt::format("no strom handshake within {} ms", deadline),
             link_event::silent);
    }
  }

  std::size_t waiting() const { return waiting_links; }

  // -- accepting ---------------------------------------------------------------------------

  void accept_peers() {
    while (!accept_paused) {
      if (waiting() >= limits.max_waiting || links.size() >= limits.max_links) {
        log::warning("{} connections, {} without a handshake yet: accepting paused",
                     links.size(), waiting());
        pause_accepting(std::nullopt);
        return;
      }
      sockaddr_storage address{};
      socklen_t length = sizeof address;
      const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&address), &length,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          log::warning("out of descriptors ({}): accepting paused for {} ms",
                       std::strerror(errno), descriptor_backoff.count());
          pause_accepting(clock::now() + descriptor_backoff);
        }
        return;  // EAGAIN, or a peer that went away before it was accepted
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto peer = describe_peer(address);
      const int inner = make_inner(peer);
      if (inner < 0) {
        ::close(fd);
        continue;
      }
      add_link(fd, inner, basp_sender::client, std::move(peer), {});
    }
  }

  /// Stops accepting until `until`, or until a waiting slot frees (nullopt).
  void pause_accepting(std::optional<clock::time_point> until) {
    accept_paused = true;
    resume_at = until;
    epoll_event event{};
    event.data.u64 = listener_tag;
    epoll_ctl(poller, EPOLL_CTL_MOD, listener, &event);
  }

  void resume_accepting(clock::time_point now) {
    if (listener < 0 || !accept_paused || (resume_at && *resume_at > now))
      return;
    if (!resume_at && (waiting() >= limits.max_waiting || links.size() >= limits.max_links))
      return;
    accept_paused = false;
    resume_at.reset();
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = listener_tag;
    epoll_ctl(poller, EPOLL_CTL_MOD, listener, &event);
  }

  void stop_serving() {
    if (listener < 0)
      return;
    epoll_ctl(poller, EPOLL_CTL_DEL, listener, nullptr);
    ::close(listener);
    listener = -1;
  }

  void start_serving(int fd, inner_factory factory) {
    listener = fd;
    make_inner = std::move(factory);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = listener_tag;
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
  }

  guard_limits limits;
  int poller = -1;
  int wake = -1;
  int listener = -1;
  inner_factory make_inner;
  bool accept_paused = false;
  std::optional<clock::time_point> resume_at;
  bool stopping = false;
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, link> links;
  std::size_t waiting_links = 0;  ///< links not admitted yet: the only ones with a deadline
  std::vector<unsigned char> scratch = std::vector<unsigned char>(read_chunk);
  std::mutex commands_mutex;
  std::vector<std::function<void()>> commands;
  std::thread thread;
};

link_guard::link_guard(guard_limits limits) : loop_(std::make_unique<loop>(limits)) {}

link_guard::~link_guard() = default;

void link_guard::attach(int outer, int inner, basp_sender sender, std::string peer,
                        link_observer observer) {
  loop_->post([this, outer, inner, sender, peer = std::move(peer),
               observer = std::move(observer)]() mutable {
    loop_->add_link(outer, inner, sender, std::move(peer), std::move(observer));
  });
}

void link_guard::serve(int listener, inner_factory make_inner) {
  loop_->post([this, listener, make_inner = std::move(make_inner)]() mutable {
    loop_->start_serving(listener, std::move(make_inner));
  });
}

void link_guard::stop_serving() {
  std::promise<void> closed;
  auto done = closed.get_future();
  loop_->post([this, &closed] {
    loop_->stop_serving();
    closed.set_value();
  });
  done.wait();
}

} // namespace strom::runtime
