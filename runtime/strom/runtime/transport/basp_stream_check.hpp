#pragma once
// Checks the byte stream a peer sends on a strom connection before CAF's middleman reads it.
// CAF 0.17's BASP reader trusts the 32-byte header's payload length and allocates it at once
// (one header claiming 4 GiB stalled a scheduler for 10 s and cost every node its job), and it
// has no limit of its own. This reader follows the stream message by message, refuses what no
// strom peer sends, and says how many bytes end in complete messages, so that the guard in
// front of the middleman hands on only whole, checked messages (memory grows with what a
// peer really sends, never with what it claims).
//
// It also holds a peer to the node id its handshake named. CAF 0.17 takes the source node of a
// routed, monitor or down message from the message itself, so without this a peer (a client
// certificate's holder included) could speak for another node: a join in a node's name, a
// forged down message that makes the scheduler lose a live node. A peer that connected to us
// names only itself as a source; the peer we connected to (the scheduler we joined, a server
// or relay we chose) may pass on other nodes' messages, since CAF routes between nodes that
// share no link through it. A client may address only the node it connected to.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/io/basp/message_type.hpp>
#include <caf/node_id.hpp>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// Which side of a connection the checked bytes come from.
enum class basp_sender {
  client,  ///< a peer that connected to us: its first message must be a client handshake
  server,  ///< a peer we connected to: its first message must be a server handshake
};

/// Size limits of a checked stream.
struct basp_limits {
  /// Largest handshake payload: a node id, application ids and the published actor's
  /// interface; strom's are under 200 bytes, so 64 KiB admits any honest peer.
  std::uint32_t handshake_payload = 64 * 1024;
  /// Largest payload of any later message: the largest update frame (the frame format's
  /// own cap) with room for CAF's envelope (actor addresses, type names).
  std::uint32_t message_payload = 0;  // 0: default_message_payload()
};

/// The default message cap: compute::max_frame_bytes plus the envelope.
std::uint32_t default_message_payload();

/// BASP 0.17.6 framing (caf/io/basp/header.hpp): a 32-byte header, then payload_len bytes.
inline constexpr std::size_t basp_header_bytes = 32;

/// Follows one direction of a connection.
class basp_stream_check {
public:
  /// A `client` sender (it connected to us) must name itself as the source of every routed,
  /// monitor and down message; a `server` sender may pass on other nodes' messages. Either
  /// must name one node id in all its handshakes.
  basp_stream_check(basp_sender sender, basp_limits limits);

  /// From now on, routed, monitor and down messages must be addressed to `self`, this
  /// process's node: what a client-role peer may send.
  void only_to(const caf::node_id& self) { only_to_ = self; }

  /// Reads the next `size` bytes of the stream. On success, how many bytes not yet released
  /// now end in complete messages (counted from the first unreleased byte); on the first
  /// violation an error naming it ("header claims a 4294967295-byte payload, above ...").
  /// After an error the stream is dead: every later call repeats the error.
  result<std::size_t> feed(const unsigned char* bytes, std::size_t size);

  /// True once the peer's handshake went through whole.
  bool admitted() const noexcept { return admitted_; }

  /// The node id the peer's handshake named; valid once admitted().
  const caf::node_id& origin() const noexcept { return origin_; }

private:
  result<void> check_header();
  result<void> check_named_nodes();

  basp_sender sender_;
  basp_limits limits_;
  unsigned char header_[basp_header_bytes] = {};
  std::size_t header_filled_ = 0;
  std::uint64_t payload_left_ = 0;
  bool in_payload_ = false;
  bool admitted_ = false;
  bool first_message_ = true;
  bool handshake_ = false;  ///< the message being read is a handshake
  bool names_nodes_ = false;  ///< ... or one whose payload opens with source and destination
  caf::io::basp::message_type operation_ = caf::io::basp::message_type::heartbeat;
  std::vector<unsigned char> named_;  ///< the first bytes of such a payload
  caf::node_id origin_;
  std::optional<caf::node_id> only_to_;
  std::size_t unreleased_ = 0;  ///< bytes fed since the last complete message ended
  std::string failure_;
};

} // namespace strom::runtime
