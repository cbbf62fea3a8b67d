#define BOOST_TEST_MODULE compute_snapshot_chunks
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/schema/snapshot.capnp.h"
#include "support/allocation_recorder.hpp"

using namespace strom;

namespace {

/// A 26M-parameter dense layer's worth of floats: 104 MB, the size the issue asks for.
constexpr std::size_t large_parameters = 26'000'000;
/// A small encoded snapshot of this many words spans a few chunks of small_payload bytes.
constexpr std::size_t small_words = 100;
constexpr std::size_t small_payload = 256;
/// A bound the hostile chunks are checked against: 64 KiB.
constexpr std::size_t small_bound = std::size_t{64} << 10;

std::vector<capnp::word> sample_words(std::size_t words) {
  std::vector<capnp::word> out(words);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  for (std::size_t i = 0; i < words * sizeof(capnp::word); ++i)
    bytes[i] = static_cast<unsigned char>(i * 31 + 7);
  return out;
}

std::vector<compute::frame> chunks_of(const std::vector<capnp::word>& words) {
  auto chunks = compute::chunk_snapshot(words, 42, small_payload);
  BOOST_REQUIRE_MESSAGE(chunks, (chunks ? "" : chunks.err().message));
  return std::move(*chunks);
}

/// A chunk frame with whatever fields a hostile peer chooses.
compute::frame forged_chunk(std::uint64_t id, std::uint32_t index, std::uint32_t count,
                            std::uint64_t total, std::size_t payload_bytes) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::SnapshotChunk>();
  root.setSnapshotId(id);
  root.setIndex(index);
  root.setCount(count);
  root.setTotalBytes(total);
  root.initPayload(static_cast<unsigned>(payload_bytes));
  const auto flat = capnp::messageToFlatArray(message);
  auto made = compute::frame::from_bytes(
    {reinterpret_cast<const std::byte*>(flat.begin()), flat.asBytes().size()});
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  return *made;
}

bool mentions(const strom::result<void>& r, const std::string& words) {
  return !r && r.err().message.find(words) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_100_mb_snapshot_travels_in_chunks_of_at_most_4_mib_and_reassembles_exactly) {
  compute::replica_snapshot large;
  large.parameters.resize(large_parameters);
  for (std::size_t i = 0; i < large.parameters.size(); ++i)
    large.parameters[i] = static_cast<float>(i % 1000) * 0.001f;
  const auto encoded = compute::encode_snapshot(large);
  BOOST_REQUIRE_GT(encoded.size() * sizeof(capnp::word), 100'000'000u);
  auto chunks = compute::chunk_snapshot({encoded.begin(), encoded.size()}, 1);
  BOOST_REQUIRE_MESSAGE(chunks, (chunks ? "" : chunks.err().message));
  compute::snapshot_assembler assembler{encoded.size() * sizeof(capnp::word)};
  for (const auto& chunk : *chunks) {
    BOOST_REQUIRE_LE(chunk.size(), compute::max_snapshot_chunk_bytes);
    auto added = assembler.add(chunk);
    BOOST_REQUIRE_MESSAGE(added, (added ? "" : added.err().message));
  }
  BOOST_REQUIRE(assembler.complete());
  const auto back = assembler.encoded();
  BOOST_REQUIRE_EQUAL(back.size(), encoded.size());
  BOOST_TEST(std::memcmp(back.data(), encoded.begin(), encoded.asBytes().size()) == 0);
  auto decoded = compute::decode_snapshot(back);
  BOOST_REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.err().message));
  BOOST_TEST(std::memcmp(decoded->parameters.data(), large.parameters.data(),
                         large.parameters.size() * sizeof(float)) == 0);
}

BOOST_AUTO_TEST_CASE(chunks_in_any_order_reassemble_exactly) {
  // A route between two nodes may change mid-snapshot: a later chunk can overtake earlier ones.
  const auto words = sample_words(small_words);
  const auto chunks = chunks_of(words);
  BOOST_REQUIRE_GE(chunks.size(), 3u);
  BOOST_TEST(*compute::snapshot_id_of(chunks[2]) == 42u);
  const std::vector<std::vector<std::size_t>> orders{
    {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}};
  for (const auto& order : orders) {
    BOOST_REQUIRE_EQUAL(order.size(), chunks.size());
    compute::snapshot_assembler assembler{small_bound};
    for (const auto i : order) {
      BOOST_TEST(!assembler.complete());
      auto added = assembler.add(chunks[i]);
      BOOST_REQUIRE_MESSAGE(added, (added ? "" : added.err().message));
    }
    BOOST_REQUIRE(assembler.complete());
    BOOST_TEST(std::memcmp(assembler.encoded().data(), words.data(),
                           words.size() * sizeof(capnp::word)) == 0);
  }
}

BOOST_AUTO_TEST_CASE(a_retransmitted_chunk_is_taken_once) {
  const auto words = sample_words(small_words);
  const auto chunks = chunks_of(words);
  compute::snapshot_assembler assembler{small_bound};
  BOOST_REQUIRE(assembler.add(chunks[1]));
  BOOST_REQUIRE(assembler.add(chunks[1]));
  BOOST_TEST(assembler.chunks_taken() == 1u);
  for (const auto& chunk : chunks)
    BOOST_REQUIRE(assembler.add(chunk));
  BOOST_REQUIRE(assembler.complete());
  BOOST_REQUIRE(assembler.add(chunks.back()));  // after completion too
  BOOST_TEST(std::memcmp(assembler.encoded().data(), words.data(),
                         words.size() * sizeof(capnp::word)) == 0);
}

BOOST_AUTO_TEST_CASE(chunks_whose_sizes_cannot_make_up_the_total_are_refused) {
  // 3 chunks of a 64-byte snapshot: equal chunks of 24 bytes and a last one of 16.
  {
    compute::snapshot_assembler assembler{small_bound};
    BOOST_REQUIRE(assembler.add(forged_chunk(1, 0, 3, 64, 24)));
    BOOST_TEST(mentions(assembler.add(forged_chunk(1, 1, 3, 64, 16)), "the other chunks carry 24"));
  }
  {
    compute::snapshot_assembler assembler{small_bound};
    BOOST_REQUIRE(assembler.add(forged_chunk(1, 0, 3, 64, 24)));
    BOOST_TEST(mentions(assembler.add(forged_chunk(1, 2, 3, 64, 8)), "does not end totalBytes"));
  }
  {
    // The last first: 24 bytes cannot follow two equal chunks in 64.
    compute::snapshot_assembler assembler{small_bound};
    BOOST_TEST(mentions(assembler.add(forged_chunk(1, 2, 3, 64, 24)), "does not end totalBytes"));
  }
  {
    compute::snapshot_assembler assembler{small_bound};
    BOOST_TEST(mentions(assembler.add(forged_chunk(1, 3, 3, 64, 8)), "beyond the count"));
  }
}

BOOST_AUTO_TEST_CASE(a_chunk_of_another_snapshot_or_total_is_refused_as_inconsistent) {
  const auto chunks = chunks_of(sample_words(small_words));
  compute::snapshot_assembler assembler{small_bound};
  BOOST_REQUIRE(assembler.add(chunks[0]));
  BOOST_TEST(mentions(assembler.add(forged_chunk(42, 1, static_cast<std::uint32_t>(chunks.size()),
                                                 small_words * 8 + 8, small_payload)),
                      "inconsistent"));
}

BOOST_AUTO_TEST_CASE(a_flipped_bit_is_refused_by_the_crc) {
  const auto words = sample_words(small_words);
  auto chunks = chunks_of(words);
  // Flip one payload bit of the middle chunk, rebuilt from its own fields.
  std::vector<std::byte> bytes(chunks[1].bytes().begin(), chunks[1].bytes().end());
  bytes[bytes.size() - 9] ^= std::byte{0x10};
  auto flipped = compute::frame::from_bytes(bytes);
  BOOST_REQUIRE(flipped);
  chunks[1] = *flipped;
  compute::snapshot_assembler assembler{small_bound};
  strom::result<void> last = strom::success();
  for (const auto& chunk : chunks)
    if (last)
      last = assembler.add(chunk);
  BOOST_TEST(mentions(last, "CRC-32 mismatch"));
  BOOST_TEST(!assembler.complete());
}

BOOST_AUTO_TEST_CASE(a_chunk_count_that_cannot_fit_the_total_is_refused) {
  compute::snapshot_assembler assembler{small_bound};
  BOOST_TEST(mentions(assembler.add(forged_chunk(1, 0, 1'000'000, 800, 8)), "count 1000000"));
}

BOOST_AUTO_TEST_CASE(a_payload_beyond_the_declared_total_is_refused) {
  compute::snapshot_assembler assembler{small_bound};
  BOOST_TEST(mentions(assembler.add(forged_chunk(1, 0, 2, 64, 128)), "does not fit 2 chunks"));
}

BOOST_AUTO_TEST_CASE(a_total_larger_than_the_model_is_refused_before_allocating_it) {
  // 1 TiB claimed against a 64 KiB bound: refused, and nothing near that is allocated.
  constexpr std::uint64_t claimed = std::uint64_t{1} << 40;
  const auto forged = forged_chunk(1, 0, 2, claimed, 8);
  compute::snapshot_assembler assembler{small_bound};
  strom::result<void> added = strom::success();
  const auto record = strom::test::allocations_during([&] { added = assembler.add(forged); });
  BOOST_TEST(mentions(added, "totalBytes 1099511627776"));
  BOOST_TEST(record.largest < small_bound);
}

BOOST_AUTO_TEST_CASE(an_accepted_snapshot_allocates_no_more_than_its_declared_total) {
  const auto words = sample_words(small_words);
  const auto chunks = chunks_of(words);
  compute::snapshot_assembler assembler{small_bound};
  const auto record = strom::test::allocations_during([&] {
    for (const auto& chunk : chunks)
      BOOST_REQUIRE(assembler.add(chunk));
  });
  BOOST_REQUIRE(assembler.complete());
  BOOST_TEST(record.largest <= words.size() * sizeof(capnp::word));
}
