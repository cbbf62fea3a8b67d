#define BOOST_TEST_MODULE actors_gradient_sharing
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/relay.hpp"
#include "strom/compute/codecs/threshold_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "support/deterministic_system.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t elements = 64;

using strom::testing::deterministic_system;

/// A frame from `origin` (7 unless told) with `sequence`, carrying +1 at the first 8 elements.
compute::frame sample_frame(std::uint64_t sequence, std::uint64_t origin = 7) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::fixed_threshold_options{1.0f}};
  compute::threshold_encoder encoder{elements, options};
  std::vector<float> update(elements, 0.0f);
  std::fill(update.begin(), update.begin() + 8, 1.5f);
  auto encoded = encoder.encode(update);
  BOOST_REQUIRE(encoded);
  auto built = compute::build_update_frame({origin, 0, sequence, 1, 0, 0}, *encoded);
  BOOST_REQUIRE(built);
  return *built;
}

/// A frame whose stream header is valid but whose root pointer points far outside it.
compute::frame corrupt_frame() {
  std::vector<std::uint64_t> words{std::uint64_t{1} << 32, ~std::uint64_t{0}};
  auto made = compute::frame::from_bytes(
    {reinterpret_cast<const std::byte*>(words.data()), words.size() * sizeof(std::uint64_t)});
  BOOST_REQUIRE(made);
  return *made;
}

relay_stats stats_of(deterministic_system& env, const caf::actor& relay_actor) {
  env.self->send(relay_actor, stats_atom_v);
  env.sched.run();
  relay_stats out;
  env.self->receive([&](const relay_stats& s) { out = s; });
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(relay_forwards_a_frame_seen_twice_only_once) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  env.self->send(r, subscribe_atom_v, caf::actor_cast<caf::actor>(env.self));
  env.sched.run();
  const auto f = sample_frame(0);
  env.self->send(r, shared_frame{f});
  env.self->send(r, shared_frame{f});
  env.sched.run();
  std::size_t frames = 0;
  env.self->receive_while([&] { return frames < 1; })([&](const shared_frame&) { ++frames; });
  const auto stats = stats_of(env, r);
  BOOST_TEST(stats.frames_forwarded == 1u);
  BOOST_TEST(stats.duplicates_dropped == 1u);
  BOOST_TEST(stats.frames_rejected == 0u);
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(relay_takes_a_restarted_nodes_frames_as_new_and_drops_its_old_ones) {
  // A node that joins again gets a new node id from the scheduler (its incarnation), so its
  // sequences start at 0 again without meeting the old incarnation's de-duplication keys;
  // a frame of the old incarnation that arrives late is still a duplicate.
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  env.self->send(r, subscribe_atom_v, caf::actor_cast<caf::actor>(env.self));
  env.self->send(r, shared_frame{sample_frame(0, 7)});
  env.self->send(r, shared_frame{sample_frame(1, 7)});
  env.self->send(r, shared_frame{sample_frame(0, 9)});  // node 7 restarted as node 9
  env.self->send(r, shared_frame{sample_frame(1, 7)});  // a late copy of the old one's
  env.sched.run();
  const auto stats = stats_of(env, r);
  BOOST_TEST(stats.frames_forwarded == 3u);
  BOOST_TEST(stats.duplicates_dropped == 1u);
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(relay_counts_and_drops_a_corrupt_frame) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  env.self->send(r, subscribe_atom_v, caf::actor_cast<caf::actor>(env.self));
  env.self->send(r, shared_frame{corrupt_frame()});
  env.self->send(r, shared_frame{sample_frame(0)});
  env.sched.run();
  // The relay survived the corrupt frame and forwarded the good one.
  env.self->receive([&](const shared_frame& f) { BOOST_TEST(f.value.size() > 16u); });
  const auto stats = stats_of(env, r);
  BOOST_TEST(stats.frames_rejected == 1u);
  BOOST_TEST(stats.frames_forwarded == 1u);
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(relay_sends_a_published_frame_to_the_peers_only) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  caf::scoped_actor trainer{env.sys};  // a local trainer: subscriber and publisher
  env.self->send(r, subscribe_atom_v, caf::actor_cast<caf::actor>(trainer));
  env.self->send(r, add_peer_atom_v, env.me());  // the test is the other node's relay
  env.sched.run();
  trainer->send(r, publish_atom_v, shared_frame{sample_frame(0)});
  trainer->send(r, publish_atom_v, drain_marker{7, 0});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 1u);
  BOOST_TEST(env.take_all<drain_marker>() == 1u);
  // A frame from the peer goes to the trainer, not back to the peer.
  env.self->send(r, shared_frame{sample_frame(1)});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 0u);
  std::size_t at_trainer = 0;
  trainer->receive_while([&] { return at_trainer < 1; })(
    [&](const shared_frame&) { ++at_trainer; });
  trainer->receive([](const shared_frame&) { BOOST_FAIL("the published frame came back"); },
                   [](const drain_marker&) { BOOST_FAIL("the published marker came back"); },
                   caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(stats_of(env, r).frames_forwarded == 2u);
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(shared_frame_survives_serialisation) {
  deterministic_system env;
  const auto original = sample_frame(5);
  std::vector<char> buffer;
  caf::binary_serializer sink{env.sys, buffer};
  shared_frame out{original};
  BOOST_REQUIRE(!sink(out));
  caf::binary_deserializer source{env.sys, buffer};
  shared_frame in;
  BOOST_REQUIRE(!source(in));
  BOOST_TEST(in.value.size() == original.size());
  BOOST_TEST(std::memcmp(in.value.bytes().data(), original.bytes().data(), original.size()) == 0);
}
