#include "strom/compute/frames/frame.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

namespace strom::compute {

namespace {

constexpr std::size_t word_bytes = sizeof(capnp::word);

std::uint32_t load_u32(const std::byte* at) {
  std::uint32_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

} // namespace

std::shared_ptr<capnp::word[]> allocate_frame_words(std::size_t words) {
  // calloc rather than new + memset: large blocks come from the kernel already zeroed, and
  // Cap'n Proto requires zeroed segments.
  auto* block = static_cast<capnp::word*>(std::calloc(words == 0 ? 1 : words, word_bytes));
  if (block == nullptr)
    throw std::bad_alloc{};
  return std::shared_ptr<capnp::word[]>(block, [](capnp::word* p) { std::free(p); });
}

result<void> frame::check_size(std::size_t bytes) {
  if (bytes % word_bytes != 0)
    return error{fmt::format("frame: length {} bytes is not a multiple of {}", bytes, word_bytes)};
  if (bytes < frame_header_bytes + word_bytes)
    return error{fmt::format("frame: length {} bytes is shorter than a stream header and a root "
                             "pointer ({} bytes)", bytes, frame_header_bytes + word_bytes)};
  if (bytes > max_frame_bytes)
    return error{fmt::format("frame: length {} bytes exceeds the cap of {} bytes", bytes,
                             max_frame_bytes)};
  return success();
}

result<frame> frame::from_bytes(std::span<const std::byte> bytes,
                                std::shared_ptr<const void> owner) {
  if (auto size_ok = check_size(bytes.size()); !size_ok)
    return size_ok.err();
  // Stream header: segment count minus one, then each segment's length in words.
  const std::uint32_t extra_segments = load_u32(bytes.data());
  if (extra_segments != 0)
    return error{fmt::format("frame: stream header declares {} segments, expected 1",
                             std::uint64_t{extra_segments} + 1)};
  const std::uint32_t segment_words = load_u32(bytes.data() + 4);
  const std::size_t actual_words = (bytes.size() - frame_header_bytes) / word_bytes;
  if (segment_words != actual_words)
    return error{fmt::format("frame: stream header declares a segment of {} words, but {} "
                             "words follow it", segment_words, actual_words)};

  const bool aligned = reinterpret_cast<std::uintptr_t>(bytes.data()) % word_bytes == 0;
  if (owner && aligned)
    return frame{std::move(owner), bytes};
  auto storage = allocate_frame_words(bytes.size() / word_bytes);
  std::memcpy(storage.get(), bytes.data(), bytes.size());
  std::span<const std::byte> copied{reinterpret_cast<const std::byte*>(storage.get()),
                                    bytes.size()};
  return frame{std::move(storage), copied};
}

std::span<const capnp::word> frame::words() const noexcept {
  return {reinterpret_cast<const capnp::word*>(bytes_.data()), bytes_.size() / word_bytes};
}

std::span<const capnp::word> frame::segment() const noexcept {
  if (bytes_.size() <= frame_header_bytes)
    return {};
  return {reinterpret_cast<const capnp::word*>(bytes_.data() + frame_header_bytes),
          (bytes_.size() - frame_header_bytes) / word_bytes};
}

} // namespace strom::compute
