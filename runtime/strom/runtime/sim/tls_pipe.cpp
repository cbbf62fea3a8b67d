#include "strom/runtime/sim/tls_pipe.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace strom::runtime::sim {

namespace {

/// Handshake flights both ends may need: TLS 1.3 with mutual certificates takes three.
constexpr int handshake_flights = 8;

/// Moves what `from` has to send to `to` (a handshake flight); errors when `to` cannot take it.
result<void> pass(tls_session& from, tls_session& to, std::vector<unsigned char>& buffer,
                  std::uint64_t& moved) {
  buffer.clear();
  from.take_sent(buffer);
  moved += buffer.size();
  for (std::size_t at = 0; at < buffer.size();) {
    const auto taken = to.put_received(buffer.data() + at, buffer.size() - at);
    if (taken == 0)
      return error{"the TLS handshake overflowed its buffer"};
    at += taken;
  }
  return success();
}

} // namespace

std::uint64_t tls_wire_bytes(std::uint64_t plaintext) {
  const auto records = (plaintext + tls_record_plaintext - 1) / tls_record_plaintext;
  return plaintext + records * tls_record_overhead;
}

tls_pipe::tls_pipe(const tls_context& connecting, const tls_context& accepting)
    : sender_(connecting, tls_session::side::connecting),
      receiver_(accepting, tls_session::side::accepting) {}

result<std::unique_ptr<tls_pipe>> tls_pipe::open(const tls_context& connecting,
                                                 const tls_context& accepting) {
  std::unique_ptr<tls_pipe> pipe{new tls_pipe{connecting, accepting}};
  std::vector<unsigned char> buffer;
  for (int flight = 0; flight < handshake_flights; ++flight) {
    // The end that refuses first names why; the other then only hears its alert.
    const auto sent = pipe->sender_.handshake();
    if (auto ok = pass(pipe->sender_, pipe->receiver_, buffer, pipe->handshake_bytes_); !ok)
      return ok.err();
    if (sent == tls_session::status::failed)
      return error{pipe->sender_.failure()};
    const auto accepted = pipe->receiver_.handshake();
    if (auto ok = pass(pipe->receiver_, pipe->sender_, buffer, pipe->handshake_bytes_); !ok)
      return ok.err();
    if (accepted == tls_session::status::failed)
      return error{pipe->receiver_.failure()};
    if (pipe->sender_.established() && pipe->receiver_.established())
      return pipe;
  }
  return error{"the TLS handshake did not complete"};
}

result<std::vector<unsigned char>> tls_pipe::seal(std::span<const std::byte> plaintext) {
  std::vector<unsigned char> records;
  records.reserve(tls_wire_bytes(plaintext.size()));
  const auto* bytes = reinterpret_cast<const unsigned char*>(plaintext.data());
  for (std::size_t at = 0; at < plaintext.size();) {
    // One record at a time: the memory between the ends holds one whole record.
    std::size_t moved = 0;
    const auto slice = std::min(tls_record_plaintext, plaintext.size() - at);
    if (sender_.write(bytes + at, slice, moved) != tls_session::status::done)
      return error{fmt::format("sealing a frame: {}", sender_.failure())};
    at += moved;
    sender_.take_sent(records);
  }
  return records;
}

result<void> tls_pipe::open_into(std::span<const unsigned char> records,
                                 std::span<std::byte> out) {
  auto* into = reinterpret_cast<unsigned char*>(out.data());
  std::size_t opened = 0;
  for (std::size_t at = 0; at < records.size();) {
    // The memory holds one whole record; reading takes every whole record out of it.
    const auto taken = receiver_.put_received(records.data() + at, records.size() - at);
    if (taken == 0)
      return error{"opening a frame: it holds more than its plaintext's records"};
    at += taken;
    for (std::size_t moved = 1; moved > 0 && opened < out.size();) {
      const auto status = receiver_.read(into + opened, out.size() - opened, moved);
      if (status == tls_session::status::want_read)
        break;
      if (status != tls_session::status::done)
        return error{fmt::format("opening a frame: {}", receiver_.failure())};
      opened += moved;
    }
  }
  if (opened != out.size())
    return error{fmt::format("opening a frame: {} bytes of {} came out", opened, out.size())};
  return success();
}

} // namespace strom::runtime::sim
