#include "strom/compute/snapshots/snapshot_chunks.hpp"

#include <algorithm>
#include <cstring>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include "strom/compute/snapshots/float_lists.hpp"
#include "strom/schema/snapshot.capnp.h"

namespace strom::compute {

namespace {

/// SnapshotChunk -> Data: two levels. A little slack, nothing more.
constexpr int chunk_nesting_limit = 4;

} // namespace

result<std::vector<frame>> chunk_snapshot(std::span<const capnp::word> encoded,
                                          std::uint64_t snapshot_id, std::size_t payload_bytes) {
  if (payload_bytes == 0 || payload_bytes % sizeof(capnp::word) != 0 ||
      payload_bytes > snapshot_chunk_payload_bytes)
    return error{fmt::format("snapshot chunks: payload size {} is not a positive multiple of 8 "
                             "of at most {} bytes", payload_bytes, snapshot_chunk_payload_bytes)};
  const auto* bytes = reinterpret_cast<const kj::byte*>(encoded.data());
  const std::size_t total = encoded.size_bytes();
  const std::size_t count = std::max<std::size_t>(1, (total + payload_bytes - 1) / payload_bytes);
  if (count > UINT32_MAX)
    return error{fmt::format("snapshot chunks: {} bytes make {} chunks, more than a chunk index "
                             "holds", total, count)};
  std::vector<frame> chunks;
  chunks.reserve(count);
  const std::uint32_t crc = crc32_of(0, bytes, total);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t begin = i * payload_bytes;
    const std::size_t size = std::min(payload_bytes, total - begin);
    capnp::MallocMessageBuilder message{
      static_cast<unsigned>((size + snapshot_chunk_overhead_bytes) / sizeof(capnp::word)),
      capnp::AllocationStrategy::FIXED_SIZE};
    auto root = message.initRoot<schema::SnapshotChunk>();
    root.setSnapshotId(snapshot_id);
    root.setIndex(static_cast<std::uint32_t>(i));
    root.setCount(static_cast<std::uint32_t>(count));
    root.setTotalBytes(total);
    if (i + 1 == count)
      root.setCrc32(crc);
    root.setPayload(kj::arrayPtr(bytes + begin, size));
    if (message.getSegmentsForOutput().size() != 1)
      return error{"snapshot chunks: a chunk took more than one segment (overhead bound wrong)"};
    const auto flat = capnp::messageToFlatArray(message);
    auto made = frame::from_bytes({reinterpret_cast<const std::byte*>(flat.begin()),
                                   flat.asBytes().size()});
    if (!made)
      return made.err();
    chunks.push_back(std::move(*made));
  }
  return chunks;
}

result<void> snapshot_assembler::add(const frame& chunk) {
  if (failed_)
    return error{fmt::format("snapshot {}: refused after an earlier error ({})", snapshot_id_,
                             failed_->message)};
  if (complete_)
    return error{fmt::format("snapshot {}: chunk after the last of {} chunks", snapshot_id_,
                             count_)};
  auto taken = take(chunk);
  if (!taken.ok())
    failed_ = taken.err();
  return taken;
}

result<void> snapshot_assembler::take(const frame& chunk) {
  if (chunk.size() > max_snapshot_chunk_bytes)
    return error{fmt::format("snapshot chunk: frame of {} bytes exceeds the {} bytes a chunk may "
                             "take", chunk.size(), max_snapshot_chunk_bytes)};
  std::optional<error> problem;
  auto failure = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = chunk.size() / sizeof(capnp::word) + 1;
    options.nestingLimit = chunk_nesting_limit;
    const auto segment = chunk.segment();
    kj::ArrayPtr<const capnp::word> segments[1] = {kj::arrayPtr(segment.data(), segment.size())};
    capnp::SegmentArrayMessageReader reader{kj::arrayPtr(segments, 1), options};
    auto root = reader.getRoot<schema::SnapshotChunk>();
    const auto index = root.getIndex();
    const auto payload = root.getPayload();
    const auto name = fmt::format("snapshot {} chunk {} of {}", root.getSnapshotId(), index,
                                  root.getCount());
    if (count_ == 0) {
      // The first chunk: check what it declares before allocating for it.
      const std::uint64_t total = root.getTotalBytes();
      if (index != 0) {
        problem = error{fmt::format("{}: chunks out of order (expected chunk 0)", name)};
        return;
      }
      if (total == 0 || total % sizeof(capnp::word) != 0 || total > max_total_bytes_) {
        problem = error{fmt::format("{}: totalBytes {} is not a whole number of words of at most "
                                    "{} bytes (the receiving model's snapshot size)",
                                    name, total, max_total_bytes_)};
        return;
      }
      const std::uint64_t most_chunks = (total + sizeof(capnp::word) - 1) / sizeof(capnp::word);
      if (root.getCount() == 0 || root.getCount() > most_chunks) {
        problem = error{fmt::format("{}: count {} does not fit totalBytes {}", name,
                                    root.getCount(), total)};
        return;
      }
      snapshot_id_ = root.getSnapshotId();
      count_ = root.getCount();
      total_bytes_ = static_cast<std::size_t>(total);
      words_ = std::make_unique<capnp::word[]>(total_bytes_ / sizeof(capnp::word));
    } else if (root.getSnapshotId() != snapshot_id_ || root.getCount() != count_ ||
               root.getTotalBytes() != total_bytes_) {
      problem = error{fmt::format("{} (totalBytes {}): inconsistent with snapshot {} of {} chunks "
                                  "and {} bytes", name, root.getTotalBytes(), snapshot_id_,
                                  count_, total_bytes_)};
      return;
    } else if (index != next_) {
      problem = error{fmt::format("{}: {} (expected chunk {})", name,
                                  index < next_ ? "duplicate chunk" : "chunks out of order",
                                  next_)};
      return;
    }
    if (payload.size() > total_bytes_ - received_) {
      problem = error{fmt::format("{}: payload of {} bytes overflows totalBytes {} ({} received)",
                                  name, payload.size(), total_bytes_, received_)};
      return;
    }
    const bool last = index + 1 == count_;
    if (last && received_ + payload.size() != total_bytes_) {
      problem = error{fmt::format("{}: last chunk leaves the snapshot at {} of its totalBytes {}",
                                  name, received_ + payload.size(), total_bytes_)};
      return;
    }
    if (payload.size() != 0) {
      std::memcpy(reinterpret_cast<kj::byte*>(words_.get()) + received_, payload.begin(),
                  payload.size());
      crc_ = crc32_of(crc_, payload.begin(), payload.size());
    }
    received_ += payload.size();
    ++next_;
    if (last) {
      if (root.getCrc32() != crc_) {
        problem = error{fmt::format("{}: CRC-32 mismatch (stored 0x{:08x}, computed 0x{:08x}): "
                                    "the snapshot is damaged", name, root.getCrc32(), crc_)};
        return;
      }
      complete_ = true;
    }
  });
  KJ_IF_MAYBE (e, failure)
    return error{fmt::format("snapshot chunk: corrupt frame: {}", e->getDescription().cStr())};
  if (problem)
    return *problem;
  return success();
}

std::span<const capnp::word> snapshot_assembler::encoded() const noexcept {
  if (!complete_)
    return {};
  return {words_.get(), total_bytes_ / sizeof(capnp::word)};
}

result<frame> take_assembled(snapshot_assembler&& done) {
  if (!done.complete())
    return error{"its chunks did not arrive whole"};
  auto holder = std::make_shared<snapshot_assembler>(std::move(done));
  const auto words = holder->encoded();
  return frame::from_bytes(
    {reinterpret_cast<const std::byte*>(words.data()), words.size() * sizeof(capnp::word)},
    holder);
}

} // namespace strom::compute
