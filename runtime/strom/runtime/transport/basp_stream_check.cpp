#include "strom/runtime/transport/basp_stream_check.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>

#include "strom/compute/frames/frame.hpp"
#include "strom/runtime/transport/tls_session.hpp"

namespace strom::runtime {

namespace {

using caf::io::basp::message_type;

static_assert(basp_header_bytes == caf::io::basp::header_size,
              "the checked framing must match the linked CAF's BASP header");

/// Room for what CAF wraps around a frame: source and destination actors and node ids,
/// the message's type names and a forwarding stack. Measured envelopes are under 200 bytes.
constexpr std::uint32_t message_envelope_bytes = 64 * 1024;

/// Bytes of a payload kept to read the node ids it opens with. A host-and-process node id is
/// 32 bytes serialised (an 8-byte kind, a 4-byte process id, a 20-byte host hash); strom makes
/// no others, and URI node ids this long would be refused as unreadable.
constexpr std::size_t named_nodes_bytes = 1024;

/// Whether the payload of `type` opens with node ids: the sender's alone in a handshake,
/// source and destination in the others (CAF 0.17.6's instance::write_*).
bool names_nodes(message_type type) {
  switch (type) {
    case message_type::server_handshake:
    case message_type::client_handshake:
    case message_type::routed_message:
    case message_type::monitor_message:
    case message_type::down_message: return true;
    default: return false;
  }
}

const char* name_of(message_type type) {
  switch (type) {
    case message_type::server_handshake: return "server handshake";
    case message_type::client_handshake: return "client handshake";
    case message_type::direct_message: return "direct message";
    case message_type::routed_message: return "routed message";
    case message_type::monitor_message: return "monitor message";
    case message_type::down_message: return "down message";
    case message_type::heartbeat: return "heartbeat";
  }
  return "unknown message";
}

} // namespace

std::uint32_t default_message_payload() {
  return static_cast<std::uint32_t>(compute::max_frame_bytes) + message_envelope_bytes;
}

basp_stream_check::basp_stream_check(basp_sender sender, basp_limits limits)
  : sender_(sender), limits_(limits) {
  if (limits_.message_payload == 0)
    limits_.message_payload = default_message_payload();
}

result<void> basp_stream_check::check_header() {
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr),
                                  reinterpret_cast<const char*>(header_), basp_header_bytes};
  caf::io::basp::header header;
  if (first_message_ && header_[0] == tls_handshake_record)
    return error{"it speaks TLS, but this end is plaintext (no --tls-ca given here)"};
  if (source(header) || header.operation > message_type::heartbeat)
    return error{fmt::format("the first byte {} is no BASP operation (0-6): not a strom peer",
                             static_cast<unsigned>(header_[0]))};
  const auto expected = sender_ == basp_sender::client ? message_type::client_handshake
                                                       : message_type::server_handshake;
  const bool handshake = caf::io::basp::is_handshake(header);
  if (first_message_ && header.operation != expected)
    return error{fmt::format("it opened with a {} instead of a {}: not a strom peer",
                             name_of(header.operation), name_of(expected))};
  if (handshake && header.operation != expected)
    return error{fmt::format("it sent a {}, which only the other side sends",
                             name_of(header.operation))};
  if (!caf::io::basp::valid(header))
    return error{fmt::format("malformed {} header", name_of(header.operation))};
  const auto cap = handshake ? limits_.handshake_payload : limits_.message_payload;
  if (header.payload_len > cap)
    return error{fmt::format("a {} header claims a {}-byte payload, above the {}-byte limit",
                             name_of(header.operation), header.payload_len, cap)};
  first_message_ = false;
  handshake_ = handshake;
  names_nodes_ = names_nodes(header.operation);
  operation_ = header.operation;
  named_.clear();
  payload_left_ = header.payload_len;
  in_payload_ = payload_left_ > 0;
  return success();
}

result<void> basp_stream_check::check_named_nodes() {
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr),
                                  reinterpret_cast<const char*>(named_.data()), named_.size()};
  caf::node_id from;
  if (handshake_) {
    if (source(from) || !from)
      return error{fmt::format("its {} names no node id", name_of(operation_))};
    if (!origin_)
      origin_ = from;
    else if (from != origin_)
      return error{fmt::format("its {} names node {}, but its first named node {}",
                               name_of(operation_), to_string(from), to_string(origin_))};
    return success();
  }
  caf::node_id to;
  if (source(from, to))
    return error{fmt::format("its {} names no readable source and destination node",
                             name_of(operation_))};
  if (sender_ == basp_sender::client && from != origin_)
    return error{fmt::format("it sent a {} from node {}, but it is node {} (a peer speaks only "
                             "for itself)", name_of(operation_), to_string(from),
                             to_string(origin_))};
  if (only_to_ && to != *only_to_)
    return error{fmt::format("it sent a {} for node {}: a client may address only the node it "
                             "connected to", name_of(operation_), to_string(to))};
  return success();
}

result<std::size_t> basp_stream_check::feed(const unsigned char* bytes, std::size_t size) {
  if (!failure_.empty())
    return error{failure_};
  std::size_t released = 0;
  std::size_t offset = 0;
  while (offset < size) {
    if (in_payload_) {
      const auto take = static_cast<std::size_t>(
        std::min<std::uint64_t>(payload_left_, size - offset));
      if (names_nodes_ && named_.size() < named_nodes_bytes)
        named_.insert(named_.end(), bytes + offset,
                      bytes + offset + std::min(take, named_nodes_bytes - named_.size()));
      payload_left_ -= take;
      offset += take;
      unreleased_ += take;
    } else {
      const auto take = std::min(basp_header_bytes - header_filled_, size - offset);
      std::copy_n(bytes + offset, take, header_ + header_filled_);
      header_filled_ += take;
      offset += take;
      unreleased_ += take;
      if (header_filled_ < basp_header_bytes)
        break;
      header_filled_ = 0;
      if (auto checked = check_header(); !checked) {
        failure_ = checked.err().message;
        return checked.err();
      }
    }
    if (!in_payload_ || payload_left_ == 0) {
      // A message ended here: a handshake admits the peer, and its bytes may go on.
      if (names_nodes_) {
        if (auto named = check_named_nodes(); !named) {
          failure_ = named.err().message;
          return named.err();
        }
      }
      if (handshake_)
        admitted_ = true;
      in_payload_ = false;
      released += unreleased_;
      unreleased_ = 0;
    }
  }
  return released;
}

} // namespace strom::runtime
