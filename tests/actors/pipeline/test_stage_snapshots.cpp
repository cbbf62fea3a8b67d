#define BOOST_TEST_MODULE actors_stage_snapshots
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/pipeline/stage_snapshots.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "support/deterministic_system.hpp"

// A subnet's store of its own snapshots and of the copies it holds for a neighbouring stage
// (issue #20's stage restore): which stage holds whose, how many are kept, and copies from two
// senders whose chunks arrive interleaved.

using namespace strom;
using namespace strom::actors;

namespace {

/// A snapshot of `values` as the chunks of snapshot `id`, 64 payload bytes each (several).
std::vector<compute::frame> chunks_of(const std::vector<float>& values, std::uint64_t id) {
  compute::replica_snapshot saved;
  saved.parameters = values;
  const auto encoded = compute::encode_snapshot(saved);
  auto chunks = compute::chunk_snapshot({encoded.begin(), encoded.size()}, id, 64);
  BOOST_REQUIRE(chunks.ok());
  BOOST_REQUIRE(chunks->size() > 1);
  return std::move(*chunks);
}

/// The parameters of an encoded snapshot.
std::vector<float> parameters_of(const compute::frame& encoded) {
  auto saved = compute::decode_snapshot(encoded.words());
  BOOST_REQUIRE(saved.ok());
  return saved->parameters;
}

stage_snapshot_note note_of(std::uint32_t stage, stage_point at) {
  stage_snapshot_note note;
  note.stage = stage;
  note.at = at;
  return note;
}

struct fixture : testing::deterministic_system {
  /// The address of an actor that ran and ended (the coordinator must run it: the system
  /// waits for every actor when it shuts down).
  caf::actor_addr sender() {
    auto address = sys.spawn([]() -> caf::behavior { return {}; }).address();
    sched.run();
    return address;
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(the_next_stage_holds_a_stages_copies_and_the_last_the_one_before) {
  BOOST_TEST(holder_of(0, 2) == 1u);
  BOOST_TEST(holder_of(1, 2) == 0u);
  BOOST_TEST(holder_of(0, 3) == 1u);
  BOOST_TEST(holder_of(1, 3) == 2u);
  BOOST_TEST(holder_of(2, 3) == 1u);
  // Copies of a pipeline (--pipelines): a stage's holder is in its own copy.
  BOOST_TEST(holder_of(2, 2) == 3u);
  BOOST_TEST(holder_of(3, 2) == 2u);
  BOOST_TEST(holder_of(5, 3) == 4u);
}

BOOST_AUTO_TEST_CASE(the_last_three_own_snapshots_are_kept) {
  stage_snapshots store{1 << 20};
  for (std::uint64_t step = 1; step <= 4; ++step)
    store.keep_own({note_of(0, {0, step}), {}});
  BOOST_TEST(!store.own({0, 1}));
  for (std::uint64_t step = 2; step <= 4; ++step)
    BOOST_TEST(store.own({0, step}));
}

BOOST_FIXTURE_TEST_CASE(copies_of_two_neighbours_arrive_interleaved_and_are_held_apart,
                        fixture) {
  stage_snapshots store{1 << 20};
  const auto before = sender();
  const auto after = sender();
  const std::vector<float> upstream(40, 1.5f);
  const std::vector<float> downstream(30, -2.0f);
  const auto first = chunks_of(upstream, 1);
  const auto last = chunks_of(downstream, 1);  // the same id from another sender
  for (std::size_t i = 0; i < std::max(first.size(), last.size()); ++i) {
    if (i < first.size())
      BOOST_REQUIRE(store.add_chunk(before, first[i]).ok());
    if (i < last.size())
      BOOST_REQUIRE(store.add_chunk(after, last[i]).ok());
  }
  BOOST_REQUIRE(store.hold(before, note_of(0, {1, 0})).ok());
  BOOST_REQUIRE(store.hold(after, note_of(2, {1, 0})).ok());
  const auto* held_first = store.held(0, {1, 0});
  const auto* held_last = store.held(2, {1, 0});
  BOOST_REQUIRE(held_first);
  BOOST_REQUIRE(held_last);
  BOOST_TEST(parameters_of(*held_first) == upstream);
  BOOST_TEST(parameters_of(*held_last) == downstream);
  BOOST_TEST(!store.held(1, {1, 0}));
}

BOOST_FIXTURE_TEST_CASE(the_last_two_copies_of_a_stage_are_held, fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  for (std::uint64_t step = 1; step <= 3; ++step) {
    for (const auto& chunk : chunks_of(std::vector<float>(20, static_cast<float>(step)), step))
      BOOST_REQUIRE(store.add_chunk(from, chunk).ok());
    BOOST_REQUIRE(store.hold(from, note_of(0, {0, step})).ok());
  }
  BOOST_TEST(!store.held(0, {0, 1}));
  BOOST_TEST(store.held(0, {0, 2}));
  BOOST_TEST(store.held(0, {0, 3}));
}

BOOST_FIXTURE_TEST_CASE(a_copy_that_did_not_arrive_whole_is_refused_naming_the_stage, fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  const auto chunks = chunks_of(std::vector<float>(40, 1.0f), 7);
  BOOST_REQUIRE(store.add_chunk(from, chunks.front()).ok());  // the rest never comes
  const auto held = store.hold(from, note_of(1, {2, 5}));
  BOOST_REQUIRE(!held.ok());
  BOOST_TEST(held.err().message.find("stage 2 at epoch 3 step 5") != std::string::npos,
             held.err().message);
  BOOST_TEST(!store.held(1, {2, 5}));
}

BOOST_FIXTURE_TEST_CASE(a_copy_larger_than_the_bound_is_refused, fixture) {
  stage_snapshots store{256};
  const auto from = sender();
  const auto chunks = chunks_of(std::vector<float>(400, 1.0f), 1);
  BOOST_TEST(!store.add_chunk(from, chunks.front()).ok());
}
