#define BOOST_TEST_MODULE actors_stage_snapshots
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/pipeline/stage_snapshots.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "support/deterministic_system.hpp"

// A subnet's store of its own snapshots and of the copies it holds for a neighbouring stage
// (issue #20's stage restore): which stage holds whose, how many are kept, copies from two
// senders whose chunks arrive interleaved, and chunks that come in any order and after the note
// that names their snapshot (#40: a route between two nodes changes when they connect directly).

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

stage_snapshot_note note_of(std::uint32_t stage, stage_point at, std::uint64_t id = 1) {
  stage_snapshot_note note;
  note.stage = stage;
  note.at = at;
  note.snapshot_id = id;
  return note;
}

/// What a waiter got: the encoded snapshot or the error.
struct outcome {
  bool called = false;
  std::optional<compute::frame> encoded;
  std::string error;
};

/// A waiter that records what it gets in `out`.
stage_snapshots::snapshot_waiter recording(outcome& out) {
  return [&out](result<compute::frame> got) {
    out.called = true;
    if (got)
      out.encoded = std::move(*got);
    else
      out.error = got.err().message;
  };
}

/// Holds `from`'s snapshot `note.snapshot_id` once whole, as the subnet does at a note.
void hold_when_whole(stage_snapshots& store, const caf::actor_addr& from,
                     const stage_snapshot_note& note) {
  store.when_whole(from, note.snapshot_id, [&store, note](result<compute::frame> got) {
    BOOST_REQUIRE_MESSAGE(got.ok(), (got ? "" : got.err().message));
    store.hold(note, std::move(*got));
  });
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
  hold_when_whole(store, before, note_of(0, {1, 0}));
  hold_when_whole(store, after, note_of(2, {1, 0}));
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
    hold_when_whole(store, from, note_of(0, {0, step}, step));
  }
  BOOST_TEST(!store.held(0, {0, 1}));
  BOOST_TEST(store.held(0, {0, 2}));
  BOOST_TEST(store.held(0, {0, 3}));
}

BOOST_FIXTURE_TEST_CASE(chunks_that_come_after_the_note_and_in_reverse_are_held_at_the_last,
                        fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  const std::vector<float> values(40, 0.25f);
  const auto chunks = chunks_of(values, 9);
  outcome got;
  BOOST_TEST(store.when_whole(from, 9, recording(got)));  // the note overtook every chunk
  for (auto chunk = chunks.rbegin(); chunk != chunks.rend(); ++chunk) {
    BOOST_TEST(!got.called);
    BOOST_REQUIRE(store.add_chunk(from, *chunk).ok());
  }
  BOOST_REQUIRE(got.called);
  BOOST_REQUIRE_MESSAGE(got.encoded, got.error);
  BOOST_TEST(parameters_of(*got.encoded) == values);
  // Whole before the wait began: the waiter is called at once.
  outcome again;
  for (const auto& chunk : chunks_of(values, 10))
    BOOST_REQUIRE(store.add_chunk(from, chunk).ok());
  BOOST_TEST(!store.when_whole(from, 10, recording(again)));
  BOOST_TEST(again.called);
  BOOST_TEST(again.encoded.has_value());
}

BOOST_FIXTURE_TEST_CASE(a_snapshot_given_up_says_how_many_of_its_chunks_arrived, fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  const auto chunks = chunks_of(std::vector<float>(40, 1.0f), 7);
  BOOST_REQUIRE(store.add_chunk(from, chunks[1]).ok());  // the rest never comes
  outcome partial;
  BOOST_TEST(store.when_whole(from, 7, recording(partial)));
  store.give_up(from, 7);
  BOOST_REQUIRE(partial.called);
  BOOST_TEST(partial.error == "snapshot 7: 1 of its " + std::to_string(chunks.size()) +
                                " chunks arrived");
  outcome none;
  BOOST_TEST(store.when_whole(from, 8, recording(none)));
  store.give_up(from, 8);
  BOOST_TEST(none.error == "snapshot 8: no chunk of it arrived");
  // A chunk of it arriving late starts afresh and harms nothing.
  BOOST_REQUIRE(store.add_chunk(from, chunks[0]).ok());
}

BOOST_FIXTURE_TEST_CASE(snapshots_abandoned_midway_are_dropped_before_an_awaited_one, fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  const std::vector<float> values(40, 3.0f);
  const auto awaited = chunks_of(values, 1);
  outcome got;
  BOOST_REQUIRE(store.add_chunk(from, awaited[0]).ok());
  BOOST_TEST(store.when_whole(from, 1, recording(got)));
  // Senders that stopped after their first chunk: more than are assembled at once.
  for (std::uint64_t id = 2; id < 2 + 2 * stage_snapshots::incoming_kept; ++id)
    BOOST_REQUIRE(store.add_chunk(from, chunks_of(values, id)[0]).ok());
  BOOST_TEST(!got.called);
  for (std::size_t i = 1; i < awaited.size(); ++i)
    BOOST_REQUIRE(store.add_chunk(from, awaited[i]).ok());
  BOOST_REQUIRE(got.encoded.has_value());
  BOOST_TEST(parameters_of(*got.encoded) == values);
}

BOOST_FIXTURE_TEST_CASE(a_damaged_snapshot_fails_its_waiter, fixture) {
  stage_snapshots store{1 << 20};
  const auto from = sender();
  const auto chunks = chunks_of(std::vector<float>(40, 1.0f), 3);
  outcome got;
  BOOST_TEST(store.when_whole(from, 3, recording(got)));
  // A chunk that claims another total than the first did: the waiter hears it at once.
  BOOST_REQUIRE(store.add_chunk(from, chunks[0]).ok());
  const auto forged = chunks_of(std::vector<float>(41, 1.0f), 3);
  BOOST_TEST(!store.add_chunk(from, forged[1]).ok());
  BOOST_REQUIRE(got.called);
  BOOST_TEST(got.error.find("inconsistent") != std::string::npos, got.error);
}

BOOST_FIXTURE_TEST_CASE(a_copy_larger_than_the_bound_is_refused, fixture) {
  stage_snapshots store{256};
  const auto from = sender();
  const auto chunks = chunks_of(std::vector<float>(400, 1.0f), 1);
  BOOST_TEST(!store.add_chunk(from, chunks.front()).ok());
}
