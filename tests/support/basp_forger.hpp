#pragma once
// BASP messages written by hand, the way CAF 0.17.6 writes them (caf/io/basp/instance.cpp),
// for tests that play a peer which lies about who it is: a handshake naming a node id of its
// choice, routed and down messages naming any source and destination.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/message.hpp>
#include <caf/node_id.hpp>

namespace strom::test {

using basp_bytes = std::vector<unsigned char>;

/// A node id no process here has: process `pid` on a made-up host.
inline caf::node_id made_up_node(std::uint32_t pid) {
  return *caf::make_node_id(pid, std::string(40, 'a'));
}

/// Header and payload of one BASP message; `write_payload` fills the payload's serializer,
/// whose `context` (needed for a caf::message) may be null otherwise.
template <class WritePayload>
basp_bytes basp_message(caf::io::basp::message_type operation, std::uint64_t operation_data,
                        caf::actor_id source_actor, caf::actor_id dest_actor,
                        WritePayload write_payload, caf::execution_unit* context = nullptr) {
  std::vector<char> payload;
  caf::binary_serializer payload_sink{context, payload};
  write_payload(payload_sink);
  std::vector<char> out;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), out};
  caf::io::basp::header header{operation, 0, static_cast<std::uint32_t>(payload.size()),
                               operation_data, source_actor, dest_actor};
  sink(header);
  out.insert(out.end(), payload.begin(), payload.end());
  return {out.begin(), out.end()};
}

/// A client handshake claiming to come from `self`.
inline basp_bytes client_handshake(const caf::node_id& self) {
  return basp_message(caf::io::basp::message_type::client_handshake, 0, 0, 0,
                      [&](caf::binary_serializer& sink) { sink(self); });
}

/// A routed asynchronous message `content` from `from` (no sender actor) to the actor
/// `dest_actor` of node `to`; `system` serialises the content (CAF needs one for a message).
inline basp_bytes routed_message(caf::actor_system& system, const caf::node_id& from,
                                 const caf::node_id& to, caf::actor_id dest_actor,
                                 caf::message content) {
  return basp_message(
    caf::io::basp::message_type::routed_message, 0, 0, dest_actor,
    [&](caf::binary_serializer& sink) {
      std::vector<caf::strong_actor_ptr> stages;
      sink(const_cast<caf::node_id&>(from), const_cast<caf::node_id&>(to), stages, content);
    },
    system.dummy_execution_unit());
}

/// A down message: the actor `source_actor` of node `from` ended, says the sender to `to`.
inline basp_bytes down_message(const caf::node_id& from, const caf::node_id& to,
                               caf::actor_id source_actor) {
  return basp_message(caf::io::basp::message_type::down_message, 0, source_actor, 0,
                      [&](caf::binary_serializer& sink) {
                        caf::error reason = caf::make_error(caf::sec::remote_linking_failed);
                        sink(const_cast<caf::node_id&>(from), const_cast<caf::node_id&>(to),
                             reason);
                      });
}

/// The node id a server handshake (header and payload, `message`) names.
inline caf::node_id handshake_sender(const basp_bytes& message) {
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr),
                                  reinterpret_cast<const char*>(message.data())
                                    + caf::io::basp::header_size,
                                  message.size() - caf::io::basp::header_size};
  caf::node_id node;
  source(node);
  return node;
}

/// One whole BASP message read with `receive(bytes, size)` (which reads exactly `size` bytes or
/// fails); empty when it failed.
template <class Receive>
basp_bytes read_basp_message(Receive receive) {
  basp_bytes message(caf::io::basp::header_size);
  if (!receive(message.data(), message.size()))
    return {};
  const auto claimed = (std::uint32_t{message[4]} << 24) | (std::uint32_t{message[5]} << 16)
                       | (std::uint32_t{message[6]} << 8) | std::uint32_t{message[7]};
  message.resize(message.size() + claimed);
  if (claimed > 0 && !receive(message.data() + caf::io::basp::header_size, claimed))
    return {};
  return message;
}

} // namespace strom::test
