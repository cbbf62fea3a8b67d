#define BOOST_TEST_MODULE actors_trainer_snapshot
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/worker/timeline.hpp"
#include "strom/actors/worker/trainer.hpp"
#include "strom/compute/snapshots/replica_snapshot.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "support/deterministic_system.hpp"
#include "support/small_sharing_replica.hpp"

using namespace strom;
using namespace strom::actors;
using strom::testing::deterministic_system;

namespace {

/// Samples of the training set: two steps of small_batch.
constexpr std::size_t samples = 2 * strom::testing::small_batch;
/// The node of the trainer under test; its only origin.
constexpr std::uint64_t own_node = 5;

std::shared_ptr<const compute::dataset> small_data() {
  auto data = std::make_shared<compute::dataset>();
  data->sample_shape = compute::shape{1, 1, strom::testing::small_features};
  data->classes = 3;
  for (std::size_t i = 0; i < samples; ++i) {
    for (std::size_t f = 0; f < strom::testing::small_features; ++f)
      data->features.push_back(static_cast<float>((i * 5 + f) % 7) * 0.2f - 0.6f);
    data->labels.push_back(static_cast<std::int32_t>(i % 3));
  }
  return data;
}

trainer_setup small_setup(deterministic_system& env) {
  trainer_setup setup;
  setup.replica = strom::testing::small_replica();
  setup.train = small_data();
  setup.share = {0, samples};
  setup.shuffle = false;
  setup.batch_size = strom::testing::small_batch;
  setup.origins = {own_node};
  setup.framer = std::make_shared<node_framer>(
    own_node, 1, setup.replica->net().parameters().size(), compute::frame_options{});
  setup.relay = caf::actor_cast<trainer_relay_actor>(env.me());
  setup.supervisor = caf::actor_cast<trainer_supervisor_actor>(env.me());
  return setup;
}

bool bit_identical(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_trainer_sends_its_snapshot_in_chunks_that_restore_an_identical_replica) {
  deterministic_system env;
  auto setup = small_setup(env);
  const auto source = setup.replica;
  auto t = env.sys.spawn(trainer, setup);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();  // the whole epoch: two steps
  BOOST_REQUIRE_EQUAL(source->iteration(), 2u);

  env.self->send(t, snapshot_atom_v, env.me());
  env.sched.run();
  std::vector<compute::frame> chunks;
  snapshot_sent sent;
  bool answered = false;
  env.self->receive_while([&] { return !answered; })(
    [&](const snapshot_chunk& chunk) { chunks.push_back(chunk.value); },
    [&](const snapshot_sent& reply) {
      sent = reply;
      answered = true;
    });
  BOOST_REQUIRE_EQUAL(chunks.size(), sent.chunks);
  BOOST_TEST(sent.snapshot_id >> 32 == own_node);

  auto target = strom::testing::small_replica();
  auto target_encoder = strom::testing::small_encoder(*target);
  compute::snapshot_assembler assembler{compute::snapshot_bytes_bound(*target, 1)};
  for (const auto& chunk : chunks) {
    auto added = assembler.add(chunk);
    BOOST_REQUIRE_MESSAGE(added, (added ? "" : added.err().message));
  }
  BOOST_REQUIRE(assembler.complete());
  BOOST_TEST(assembler.encoded().size_bytes() == sent.bytes);
  auto snapshot = compute::decode_snapshot(assembler.encoded());
  BOOST_REQUIRE_MESSAGE(snapshot, (snapshot ? "" : snapshot.err().message));
  auto applied = compute::apply_snapshot(*snapshot, *target, &target_encoder);
  BOOST_REQUIRE_MESSAGE(applied, (applied ? "" : applied.err().message));

  BOOST_TEST(bit_identical(target->net().parameters(), source->net().parameters()));
  BOOST_TEST(bit_identical(target->updater_state(), source->updater_state()));
  BOOST_TEST(bit_identical(target->net().state(), source->net().state()));
  BOOST_TEST(target->iteration() == source->iteration());
  BOOST_TEST(snapshot->progress.batches_in_epoch == 2u);
  BOOST_REQUIRE_EQUAL(snapshot->progress.origins.size(), 1u);
  BOOST_TEST(snapshot->progress.origins[0].origin == own_node);

  env.self->send_exit(t, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(a_restored_trainer_takes_the_others_view_without_the_sources_residual) {
  deterministic_system env;
  auto setup = small_setup(env);
  setup.origins = {own_node, own_node + 1};  // not alone: it encodes and keeps a residual
  auto source = env.sys.spawn(trainer, setup);
  env.self->send(source, start_atom_v, std::uint32_t{0});
  env.sched.run();
  env.self->send(source, snapshot_atom_v, env.me());
  env.sched.run();
  auto receiver_setup = small_setup(env);
  const auto restored = receiver_setup.replica;
  compute::snapshot_assembler assembler{compute::snapshot_bytes_bound(*restored, 1)};
  bool answered = false;
  env.self->receive_while([&] { return !answered; })(
    [&](const snapshot_chunk& chunk) { BOOST_REQUIRE(assembler.add(chunk.value)); },
    [&](const snapshot_sent&) { answered = true; });
  BOOST_REQUIRE(assembler.complete());
  const auto sent = compute::decode_snapshot(assembler.encoded());
  BOOST_REQUIRE(sent && sent->sharing);
  const auto words = assembler.encoded();
  auto whole = compute::frame::from_bytes(
    {reinterpret_cast<const std::byte*>(words.data()), words.size_bytes()});
  BOOST_REQUIRE(whole);

  auto receiver = env.sys.spawn(trainer, receiver_setup);
  env.self->send(receiver, restore_atom_v, assembled_snapshot{*whole});
  env.sched.run();
  bool taken = false;
  env.self->receive([&](bool ok) { taken = ok; }, caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_REQUIRE(taken);
  const auto params = restored->net().parameters();
  const auto& residual = sent->sharing->residual;
  BOOST_REQUIRE_EQUAL(params.size(), residual.size());
  bool nonzero_residual = false;
  for (std::size_t i = 0; i < params.size(); ++i) {
    BOOST_TEST(params[i] == sent->parameters[i] - residual[i]);
    nonzero_residual |= residual[i] != 0.0f;
  }
  BOOST_TEST(nonzero_residual);  // else this test would show nothing
  BOOST_TEST(restored->iteration() == 2u);

  // Its own residual starts empty: its snapshot says so.
  env.self->send(receiver, snapshot_atom_v, env.me());
  env.sched.run();
  compute::snapshot_assembler again{compute::snapshot_bytes_bound(*restored, 1)};
  answered = false;
  env.self->receive_while([&] { return !answered; })(
    [&](const snapshot_chunk& chunk) { BOOST_REQUIRE(again.add(chunk.value)); },
    [&](const snapshot_sent&) { answered = true; });
  const auto own = compute::decode_snapshot(again.encoded());
  BOOST_REQUIRE(own && own->sharing);
  for (const auto value : own->sharing->residual)
    BOOST_TEST(value == 0.0f);
  for (const auto& t : {source, receiver})
    env.self->send_exit(t, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(a_trainer_with_a_timeline_records_its_steps_and_the_snapshot_it_sent) {
  deterministic_system env;
  auto setup = small_setup(env);
  setup.origins = {own_node, own_node + 1};  // not alone: it encodes and frames
  timeline_tracks recorded{env.sys.clock().now()};
  setup.track = recorded.track(own_node, 0, "worker 0");
  auto t = env.sys.spawn(trainer, setup);
  env.self->send(t, start_atom_v, std::uint32_t{0});
  env.sched.run();
  env.self->send(t, snapshot_atom_v, env.me());
  env.sched.run();
  std::map<timeline_kind, std::size_t> kinds;
  for (const auto& event : setup.track->events()) {
    ++kinds[event.kind];
    BOOST_TEST(event.end_ns >= event.start_ns);
  }
  // Both steps of its share, then the snapshot.
  for (const auto kind : {timeline_kind::batch, timeline_kind::forward_backward,
                          timeline_kind::encode, timeline_kind::frame, timeline_kind::snapshot})
    BOOST_TEST(kinds[kind] > 0u, name_of(kind) << " missing");
  env.self->send_exit(t, caf::exit_reason::user_shutdown);
  env.sched.run();
}
