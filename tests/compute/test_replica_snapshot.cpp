#define BOOST_TEST_MODULE compute_replica_snapshot
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <span>

#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "support/small_sharing_replica.hpp"

using namespace strom;
using namespace strom::testing;

namespace {

/// Steps the source trains before its snapshot is taken.
constexpr std::size_t steps_before = 5;
/// Payload of each chunk: small, so the small model's snapshot spans several chunks.
constexpr std::size_t small_chunk_payload = 256;

bool bit_identical(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

compute::snapshot_progress some_progress() {
  return {0, steps_before, steps_before, steps_before * small_batch, {{3, 0, 4, 0}, {9, 0, 5, 0}}};
}

/// The source's snapshot sent through encoding, chunks and the assembler.
compute::replica_snapshot through_chunks(const compute::replica_snapshot& taken,
                                         const compute::replica& receiver) {
  const auto encoded = compute::encode_snapshot(taken);
  auto chunks = compute::chunk_snapshot({encoded.begin(), encoded.size()}, 1, small_chunk_payload);
  BOOST_REQUIRE_MESSAGE(chunks, (chunks ? "" : chunks.err().message));
  BOOST_REQUIRE_GT(chunks->size(), 1u);
  compute::snapshot_assembler assembler{compute::snapshot_bytes_bound(receiver, 2)};
  for (const auto& chunk : *chunks) {
    auto added = assembler.add(chunk);
    BOOST_REQUIRE_MESSAGE(added, (added ? "" : added.err().message));
  }
  BOOST_REQUIRE(assembler.complete());
  auto decoded = compute::decode_snapshot(assembler.encoded());
  BOOST_REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.err().message));
  return std::move(*decoded);
}

/// A replica trained a few steps and its encoder (`calibrated` or Deeplearning4j's adaptive)
/// restored on another from a snapshot sent in chunks: the two are bit-identical and step
/// identically.
void check_restored_replica_steps_identically(bool calibrated) {
  auto source = small_replica();
  auto source_encoder = small_encoder(*source, calibrated);
  for (std::size_t step = 0; step < steps_before; ++step)
    sharing_step(*source, source_encoder, step);
  BOOST_REQUIRE(!source->net().state().empty());  // batch-norm running statistics

  auto target = small_replica();
  auto target_encoder = small_encoder(*target, calibrated);
  const auto restored =
    through_chunks(compute::take_snapshot(*source, &source_encoder, some_progress()), *target);
  auto applied = compute::apply_snapshot(restored, *target, &target_encoder);
  BOOST_REQUIRE_MESSAGE(applied, (applied ? "" : applied.err().message));

  BOOST_TEST(bit_identical(target->net().parameters(), source->net().parameters()));
  BOOST_TEST(bit_identical(target->updater_state(), source->updater_state()));
  BOOST_TEST(bit_identical(target->net().state(), source->net().state()));
  BOOST_TEST(bit_identical(target_encoder.residual(), source_encoder.residual()));
  if (!calibrated)  // a calibrated threshold is estimated afresh from the residual each step
    BOOST_TEST(target_encoder.threshold() == source_encoder.threshold());
  BOOST_TEST(target->iteration() == source->iteration());
  BOOST_TEST(restored.progress.origins.size() == 2u);
  BOOST_TEST(restored.progress.origins[1].clock == 5u);

  sharing_step(*source, source_encoder, steps_before);
  sharing_step(*target, target_encoder, steps_before);
  BOOST_TEST(bit_identical(target->net().parameters(), source->net().parameters()));
  BOOST_TEST(bit_identical(target_encoder.residual(), source_encoder.residual()));
}

} // namespace

BOOST_AUTO_TEST_CASE(a_restored_replica_is_bit_identical_and_steps_identically) {
  check_restored_replica_steps_identically(false);
}

BOOST_AUTO_TEST_CASE(a_restored_calibrated_replica_is_bit_identical_and_steps_identically) {
  // Its last message was a blocks encoding, which the snapshot carries as its last encoding.
  check_restored_replica_steps_identically(true);
}

BOOST_AUTO_TEST_CASE(a_snapshot_of_another_shape_is_refused_with_the_section_named) {
  auto source = small_replica();
  auto encoder = small_encoder(*source);
  auto snapshot = compute::take_snapshot(*source, &encoder, some_progress());
  snapshot.updater_state.pop_back();
  auto target = small_replica();
  auto target_encoder = small_encoder(*target);
  const std::vector<float> before(target->net().parameters().begin(),
                                  target->net().parameters().end());
  auto applied = compute::apply_snapshot(snapshot, *target, &target_encoder);
  BOOST_REQUIRE(!applied);
  BOOST_TEST(applied.err().message.find("updater state") != std::string::npos);
  BOOST_TEST(bit_identical(target->net().parameters(), before));
}

BOOST_AUTO_TEST_CASE(a_snapshot_with_sharing_state_is_refused_by_a_worker_without_an_encoder) {
  auto source = small_replica();
  auto encoder = small_encoder(*source);
  const auto snapshot = compute::take_snapshot(*source, &encoder, some_progress());
  auto target = small_replica();
  auto applied = compute::apply_snapshot(snapshot, *target, nullptr);
  BOOST_REQUIRE(!applied);
  BOOST_TEST(applied.err().message.find("sharing") != std::string::npos);
}
