#pragma once
// The one place where bytes from the network reach a strom process. CAF 0.17's middleman has
// no size caps, no handshake deadline and no connection limit, and it spins when it runs out
// of descriptors; it cannot be told to check a connection's bytes first. So strom's sockets
// to peers are held by this guard, and the middleman talks to the guard over a socketpair per
// peer (a CAF scribe on the inner end): the guard passes a peer's bytes on only in whole
// messages that basp_stream_check admits, closes peers that send no handshake in time or
// break a rule (one log line with their address; nobody else notices), caps the connections
// still waiting for a handshake and backs off when descriptors run out.
//
// One thread and epoll for all links of a process side (a scheduler's port, one client
// connection). Traffic after the handshake is copied once more than without the guard.
//
// The stream check also holds each peer to the node id of its handshake (basp_stream_check.hpp
// says why), and a client certificate's holder to messages for this node.
//
// With a TLS context the guard also ends TLS (tls_session.hpp says why here and not in CAF's
// OpenSSL module): a peer's bytes are decrypted before basp_stream_check sees them, and the
// handshake deadline covers the TLS handshake and the BASP handshake together.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "strom/runtime/security/peer_registry.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/transport/basp_stream_check.hpp"

namespace strom::runtime {

/// Whether a guard's links speak TLS, and whom they admit then.
struct guard_tls {
  /// This process's identity and the CA; null: plaintext links, nobody is verified.
  std::shared_ptr<const tls_context> context;
  /// Peers with a client certificate are admitted too (the scheduler's port); otherwise only
  /// node certificates (relay ports, and what clients and nodes connect to).
  bool admit_clients = false;
  /// Set: told the node id and certificate of every peer whose handshakes passed, while its
  /// link is open (the scheduler's join check).
  std::shared_ptr<peer_registry> peers;
  /// This process's node: the only one a client-role peer's routed, monitor and down messages
  /// may be addressed to (guarded_port sets it).
  caf::node_id self;
};

/// What a guard admits.
struct guard_limits {
  basp_limits basp;
  /// Time a peer has from its connection to its handshake; honest peers need one round trip.
  std::chrono::milliseconds handshake_deadline = std::chrono::seconds(5);
  /// Connections still waiting for their handshake; beyond it accepting pauses. 256 such
  /// links hold 768 descriptors, within the common default limit of 1024.
  std::size_t max_waiting = 256;
  /// Connections in all; beyond it accepting pauses (each holds three descriptors).
  std::size_t max_links = 1024;
  /// TLS, or plaintext when tls.context is null.
  guard_tls tls;
};

/// How a guarded link ended its wait for the peer's handshake, or ended at all.
enum class link_event {
  admitted,  ///< the peer's handshake went through whole
  refused,   ///< the peer broke a rule; the link is closed
  untrusted, ///< the TLS handshake failed, or the peer's certificate is not allowed here
  silent,    ///< the peer sent no handshake within the deadline; the link is closed
  closed,    ///< either side closed the link; the reason says which (closed_by_peer)
};

/// The reason given with link_event::closed when the network side closed the link.
inline constexpr const char* closed_by_peer = "closed by the peer";

/// Told once per event on a link, on the guard's thread: the event and, when refused or
/// closed, why.
using link_observer = std::function<void(link_event, const std::string&)>;

/// Gives a newly accepted peer its inner end: returns the guard's end of a fresh socketpair
/// whose other end was handed to the middleman, or -1 to turn the peer away.
using inner_factory = std::function<int(const std::string& peer)>;

class link_guard {
public:
  explicit link_guard(guard_limits limits);
  ~link_guard();
  link_guard(const link_guard&) = delete;
  link_guard& operator=(const link_guard&) = delete;

  /// Guards a connected socket `outer` to `peer` paired with `inner`; takes both descriptors.
  /// `sender` says which handshake the peer must open with.
  void attach(int outer, int inner, basp_sender sender, std::string peer,
              link_observer observer = {});

  /// Accepts peers on the listening socket `listener` (taken) as clients, pairing each with
  /// the descriptor `make_inner` returns.
  void serve(int listener, inner_factory make_inner);

  /// Closes the listening socket, once this returns: no peer is accepted any more, and the
  /// links already made go on until the guard ends.
  void stop_serving();

private:
  struct loop;
  std::unique_ptr<loop> loop_;
};

} // namespace strom::runtime
