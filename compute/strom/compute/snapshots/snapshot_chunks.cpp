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

/// Runs `use` on `chunk` read as a SnapshotChunk; an error when the frame is too large for a
/// chunk or no valid message.
template <typename Use>
result<void> read_chunk(const frame& chunk, Use&& use) {
  if (chunk.size() > max_snapshot_chunk_bytes)
    return error{fmt::format("snapshot chunk: frame of {} bytes exceeds the {} bytes a chunk may "
                             "take", chunk.size(), max_snapshot_chunk_bytes)};
  auto failure = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = chunk.size() / sizeof(capnp::word) + 1;
    options.nestingLimit = chunk_nesting_limit;
    const auto segment = chunk.segment();
    kj::ArrayPtr<const capnp::word> segments[1] = {kj::arrayPtr(segment.data(), segment.size())};
    capnp::SegmentArrayMessageReader reader{kj::arrayPtr(segments, 1), options};
    use(reader.getRoot<schema::SnapshotChunk>());
  });
  KJ_IF_MAYBE (e, failure)
    return error{fmt::format("snapshot chunk: corrupt frame: {}", e->getDescription().cStr())};
  return success();
}

} // namespace

result<std::uint64_t> snapshot_id_of(const frame& chunk) {
  std::uint64_t id = 0;
  auto read = read_chunk(chunk, [&](schema::SnapshotChunk::Reader root) {
    id = root.getSnapshotId();
  });
  if (!read)
    return read.err();
  return id;
}

result<std::vector<frame>> chunk_snapshot(std::span<const capnp::word> encoded,
                                          std::uint64_t snapshot_id, std::size_t payload_bytes) {
  if (payload_bytes == 0 || payload_bytes % sizeof(capnp::word) != 0 ||
      payload_bytes > max_snapshot_chunk_payload_bytes)
    return error{fmt::format("snapshot chunks: payload size {} is not a positive multiple of 8 "
                             "of at most {} bytes",
                             payload_bytes, max_snapshot_chunk_payload_bytes)};
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
  auto taken = take(chunk);
  if (!taken.ok())
    failed_ = taken.err();
  return taken;
}

result<void> snapshot_assembler::take(const frame& chunk) {
  std::optional<error> problem;
  auto read = read_chunk(chunk, [&](schema::SnapshotChunk::Reader root) {
    const auto index = root.getIndex();
    const auto payload = root.getPayload();
    const auto name = fmt::format("snapshot {} chunk {} of {}", root.getSnapshotId(), index,
                                  root.getCount());
    if (count_ == 0) {
      // The first chunk to arrive: check what it declares before allocating for it.
      const std::uint64_t total = root.getTotalBytes();
      if (total == 0 || total % sizeof(capnp::word) != 0 || total > max_total_bytes_) {
        problem = error{fmt::format("{}: totalBytes {} is not a whole number of words of at most "
                                    "{} bytes (the receiving model's snapshot size)",
                                    name, total, max_total_bytes_)};
        return;
      }
      const std::uint64_t most_chunks = total / sizeof(capnp::word);
      if (root.getCount() == 0 || root.getCount() > most_chunks) {
        problem = error{fmt::format("{}: count {} does not fit totalBytes {}", name,
                                    root.getCount(), total)};
        return;
      }
      snapshot_id_ = root.getSnapshotId();
      count_ = root.getCount();
      total_bytes_ = static_cast<std::size_t>(total);
      arrived_.assign(count_, false);
      words_ = std::make_unique<capnp::word[]>(total_bytes_ / sizeof(capnp::word));
    } else if (root.getSnapshotId() != snapshot_id_ || root.getCount() != count_ ||
               root.getTotalBytes() != total_bytes_) {
      problem = error{fmt::format("{} (totalBytes {}): inconsistent with snapshot {} of {} chunks "
                                  "and {} bytes", name, root.getTotalBytes(), snapshot_id_,
                                  count_, total_bytes_)};
      return;
    }
    if (index >= count_) {
      problem = error{fmt::format("{}: index beyond the count", name)};
      return;
    }
    if (arrived_[index])
      return;  // a retransmission: the bytes are in place (the CRC checks the whole)
    auto offset = offset_of(index, payload.size());
    if (!offset) {
      problem = error{fmt::format("{}: {}", name, offset.err().message)};
      return;
    }
    std::memcpy(reinterpret_cast<kj::byte*>(words_.get()) + *offset, payload.begin(),
                payload.size());
    arrived_[index] = true;
    if (index + 1 == count_)
      crc_ = root.getCrc32();
    if (++taken_ < count_)
      return;
    const std::uint32_t crc =
      crc32_of(0, reinterpret_cast<const kj::byte*>(words_.get()), total_bytes_);
    if (*crc_ != crc) {
      problem = error{fmt::format("snapshot {}: CRC-32 mismatch (stored 0x{:08x}, computed "
                                  "0x{:08x}): the snapshot is damaged", snapshot_id_, *crc_, crc)};
      return;
    }
    complete_ = true;
  });
  if (!read)
    return read.err();
  if (problem)
    return *problem;
  return success();
}

result<std::size_t> snapshot_assembler::offset_of(std::uint32_t index, std::size_t bytes) {
  const std::uint64_t before_last = count_ - 1;
  if (index == before_last) {
    // The last chunk ends the snapshot: its size fixes the other chunks' when none came yet.
    const auto wrong = [&] {
      return error{fmt::format("last chunk of {} bytes does not end totalBytes {} after {} "
                               "chunks", bytes, total_bytes_, before_last)};
    };
    if (bytes == 0 || bytes > total_bytes_)
      return wrong();
    const std::size_t before = total_bytes_ - bytes;
    if (before_last == 0 && before != 0)
      return wrong();
    if (before_last != 0 && chunk_bytes_ == 0) {
      const std::size_t each = before / before_last;
      if (before % before_last != 0 || each < bytes || each % sizeof(capnp::word) != 0 ||
          each > max_snapshot_chunk_payload_bytes)
        return wrong();
      chunk_bytes_ = each;
    } else if (before != before_last * chunk_bytes_) {  // 0 for a single chunk
      return wrong();
    }
    return before;
  }
  if (chunk_bytes_ == 0) {
    // The first of the equal chunks: all of them and the last must make up the total.
    if (bytes == 0 || bytes % sizeof(capnp::word) != 0 || bytes > max_snapshot_chunk_payload_bytes
        || before_last > (total_bytes_ - 1) / bytes || total_bytes_ - before_last * bytes > bytes)
      return error{fmt::format("payload of {} bytes does not fit {} chunks of totalBytes {}",
                               bytes, count_, total_bytes_)};
    chunk_bytes_ = bytes;
  } else if (bytes != chunk_bytes_) {
    return error{fmt::format("payload of {} bytes where the other chunks carry {}", bytes,
                             chunk_bytes_)};
  }
  return index * chunk_bytes_;
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
