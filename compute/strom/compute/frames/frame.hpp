#pragma once
// An immutable, reference-counted Cap'n Proto message in stream form: one 8-byte stream header
// word followed by exactly one segment (shared/CAF-0.17-NOTES.md, "One segment, no copy").
// Copies of a frame share one buffer, so a local CAF send passes a pointer, a remote send
// serialises bytes() once, and a receiver reads the message in place.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <capnp/common.h>

#include "strom/compute/result.hpp"

namespace strom::compute {

/// Largest Cap'n Proto `Data` blob (2^29 - 1 bytes, the list element count limit).
inline constexpr std::size_t max_payload_bytes = (std::size_t{1} << 29) - 1;

/// Largest frame accepted from outside: a maximal `Data` payload plus 4 KiB for the stream
/// header, root pointer and struct words. Bounded so one frame never stalls a node's I/O
/// thread for long and a forged length cannot make a receiver allocate gigabytes.
inline constexpr std::size_t max_frame_bytes = max_payload_bytes + 1 + 4096;

/// Size of the stream header word that precedes the segment.
inline constexpr std::size_t frame_header_bytes = sizeof(capnp::word);

/// One single-segment Cap'n Proto message, shared and immutable.
class frame {
public:
  /// An empty frame (no bytes); only useful as a placeholder before assignment.
  frame() = default;

  /// Checks a received length before any allocation: a multiple of 8, at least a stream
  /// header plus one word, at most max_frame_bytes.
  static result<void> check_size(std::size_t bytes);

  /// Makes a frame from received bytes after checking the size and the stream header (one
  /// segment whose length fills the rest exactly). When `owner` keeps `bytes` alive and they
  /// are 8-byte aligned, the frame reads them in place; otherwise (no owner, or unaligned
  /// input, which Cap'n Proto cannot read even on x86) they are copied once into aligned
  /// storage.
  static result<frame> from_bytes(std::span<const std::byte> bytes,
                                  std::shared_ptr<const void> owner = {});

  /// The serialised form: stream header word, then the segment.
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

  /// Length of bytes().
  std::size_t size() const noexcept { return bytes_.size(); }

  /// True for a default-constructed frame.
  bool empty() const noexcept { return bytes_.empty(); }

  /// The segment's words, without the stream header (word-aligned).
  std::span<const capnp::word> segment() const noexcept;

  /// All of bytes() as words, stream header included: what a whole encoded message (a
  /// snapshot) is read and chunked from.
  std::span<const capnp::word> words() const noexcept;

private:
  frame(std::shared_ptr<const void> owner, std::span<const std::byte> bytes)
    : owner_(std::move(owner)), bytes_(bytes) {}

  std::shared_ptr<const void> owner_;  // keeps bytes_ alive; shared by every copy
  std::span<const std::byte> bytes_;
};

/// Zeroed, 8-byte aligned storage of `words` words owned by a shared pointer; what builders
/// and file readers fill before handing the bytes to frame::from_bytes.
std::shared_ptr<capnp::word[]> allocate_frame_words(std::size_t words);

} // namespace strom::compute
