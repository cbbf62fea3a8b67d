#define BOOST_TEST_MODULE actors_gradient_sharing
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/frames/update_frame.hpp"
#include "support/deterministic_system.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t elements = 64;

using strom::testing::deterministic_system;

/// A frame from `origin` (7 unless told) with `sequence` in `round`, carrying +1 at the first
/// 8 elements.
compute::frame sample_frame(std::uint64_t sequence, std::uint32_t round = 0,
                            std::uint64_t origin = 7) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::fixed_threshold_options{1.0f}};
  compute::threshold_encoder encoder{elements, options};
  std::vector<float> update(elements, 0.0f);
  std::fill(update.begin(), update.begin() + 8, 1.5f);
  auto encoded = encoder.encode(update);
  BOOST_REQUIRE(encoded);
  auto built = compute::build_update_frame({origin, 0, sequence, 1, round, 0}, *encoded);
  BOOST_REQUIRE(built);
  return *built;
}

/// A sum of node `origin` to average 0 of round 0 (tree version `attempt`), all `value`.
average_part sum_of(std::uint64_t origin, float value, std::uint64_t attempt = 1) {
  const std::vector<float> values{1.0f, value, value};
  auto built = compute::build_update_frame({origin, 0, 0, attempt, 0, 0},
                                           compute::dense_fp32_update(values));
  BOOST_REQUIRE(built);
  return {0, 0, attempt, {1, 2, 3}, shared_frame{*built}};
}

/// The values of an average's sum.
std::vector<float> values_of(const shared_frame& sum) {
  compute::frame_workspace workspace;
  auto view = compute::read_update_frame(sum.value, workspace);
  BOOST_REQUIRE(view);
  std::vector<float> values(view->elements);
  std::memcpy(values.data(), view->payload.data(), values.size() * sizeof(float));
  return values;
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

/// The sequence of a frame `actor` received next ("m" for a drain marker of round r: 1000 + r);
/// nullopt when nothing waits.
std::optional<std::uint64_t> next_received(caf::scoped_actor& actor) {
  std::optional<std::uint64_t> got;
  compute::frame_workspace workspace;
  actor->receive(
    [&](const shared_frame& f) {
      auto view = compute::read_update_frame(f.value, workspace);
      BOOST_REQUIRE(view);
      got = view->header.sequence;
    },
    [&](const drain_marker& m) { got = 1000 + m.epoch; },
    caf::after(std::chrono::seconds(0)) >> [] {});
  return got;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_mesh_relay_resends_what_it_kept_of_the_round_in_order_to_a_peer_wired_to_repair) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  caf::scoped_actor child{env.sys};     // a mesh neighbour from the first wiring
  caf::scoped_actor adopted{env.sys};   // re-attached after a loss
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(child), false);
  env.sched.run();
  // Round 0's frame is replaced by round 1's: only the current round is kept.
  env.self->send(r, shared_frame{sample_frame(0, 0)});
  env.self->send(r, shared_frame{sample_frame(1, 1)});
  env.self->send(r, shared_frame{sample_frame(2, 1)});
  env.self->send(r, drain_marker{7, 1});
  env.sched.run();
  env.self->send(r, wire_atom_v, caf::actor_cast<caf::actor>(adopted), true);
  env.sched.run();
  BOOST_TEST((next_received(adopted) == std::optional<std::uint64_t>{1}));
  BOOST_TEST((next_received(adopted) == std::optional<std::uint64_t>{2}));
  BOOST_TEST((next_received(adopted) == std::optional<std::uint64_t>{1001}));  // after its frames
  BOOST_TEST(!next_received(adopted));
  BOOST_TEST(env.take_all<wired_atom>() == 1u);
  // The first wiring resends nothing.
  caf::scoped_actor wired_fresh{env.sys};
  env.self->send(r, wire_atom_v, caf::actor_cast<caf::actor>(wired_fresh), false);
  env.sched.run();
  BOOST_TEST(!next_received(wired_fresh));
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(a_mesh_relay_reduces_its_subtrees_averages_and_passes_the_totals_down) {
  // Node 2 of the tree 1 > 2 > 3: its parent, child and a trainer are the test's actors.
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  caf::scoped_actor parent{env.sys};
  caf::scoped_actor child{env.sys};
  caf::scoped_actor trainer{env.sys};
  caf::scoped_actor stranger{env.sys};
  env.self->send(r, subscribe_atom_v, caf::actor_cast<caf::actor>(trainer));
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(parent), false);
  env.self->send(r, wire_atom_v, caf::actor_cast<caf::actor>(child), false);
  env.self->send(r, average_tree{1, 2, 1, {1, 2, 3}, {0, 1, 2}});
  env.sched.run();
  BOOST_TEST(env.take_all<wired_atom>() == 1u);
  // A stranger's sum and the parent's (it never sends one) count for nothing.
  stranger->send(r, sum_of(3, 100.0f));
  parent->send(r, sum_of(3, 100.0f));
  env.self->send(r, publish_atom_v, sum_of(2, 2.0f, 0));
  child->send(r, sum_of(3, 4.0f));
  env.sched.run();
  std::optional<average_part> up;
  parent->receive([&](const average_part& part) { up = part; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_REQUIRE(up);
  BOOST_TEST(values_of(up->sum) == (std::vector<float>{2, 6, 6}));
  BOOST_TEST(up->attempt == 1u);
  // The total comes down: the trainer and the child get it, the parent not again.
  const average_total total{0, 0, sum_of(1, 9.0f).sum};
  parent->send(r, total);
  env.sched.run();
  BOOST_TEST(trainer->mailbox().size() == 1u);
  BOOST_TEST(child->mailbox().size() == 1u);
  BOOST_TEST(parent->mailbox().empty());
  // A neighbour wired later gets the totals taken.
  caf::scoped_actor adopted{env.sys};
  env.self->send(r, wire_atom_v, caf::actor_cast<caf::actor>(adopted), true);
  env.sched.run();
  BOOST_TEST(adopted->mailbox().size() == 1u);
  const auto stats = stats_of(env, r);
  BOOST_TEST(stats.frames_rejected == 1u);  // the parent's sum
  BOOST_TEST(stats.averaging_bytes == up->sum.value.size() + 2 * total.sum.value.size());
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(a_plain_relay_keeps_nothing_to_resend) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);  // the hub: its peers are added without mesh edges
  env.self->send(r, shared_frame{sample_frame(0)});
  env.sched.run();
  caf::scoped_actor peer{env.sys};
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(peer), true);
  env.sched.run();
  BOOST_TEST(!next_received(peer));
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(a_forgotten_peers_messages_are_dropped_and_its_origins_frames_from_others_pass) {
  deterministic_system env;
  auto r = env.sys.spawn(relay);
  caf::scoped_actor lost{env.sys};      // origin 7's relay
  caf::scoped_actor survivor{env.sys};  // another neighbour, which had more of 7's frames
  env.self->send(r, subscribe_atom_v, env.me());
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(lost), false);
  env.self->send(r, add_peer_atom_v, caf::actor_cast<caf::actor>(survivor), false);
  env.sched.run();
  lost->send(r, shared_frame{sample_frame(0)});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 1u);
  env.self->send(r, forget_atom_v, std::uint64_t{7}, caf::actor_cast<caf::actor>(lost));
  env.sched.run();
  origin_frames counted;
  env.self->receive([&](const origin_frames& c) { counted = c; });
  BOOST_TEST((counted.frames == std::vector<std::uint64_t>{1}));
  lost->send(r, shared_frame{sample_frame(1)});
  lost->send(r, drain_marker{7, 0});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 0u);
  BOOST_TEST(env.take_all<drain_marker>() == 0u);
  survivor->send(r, shared_frame{sample_frame(1)});
  env.sched.run();
  BOOST_TEST(env.take_all<shared_frame>() == 1u);
  env.self->send_exit(r, caf::exit_reason::user_shutdown);
  env.sched.run();
}

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
  env.self->send(r, shared_frame{sample_frame(0, 0, 7)});
  env.self->send(r, shared_frame{sample_frame(1, 0, 7)});
  env.self->send(r, shared_frame{sample_frame(0, 0, 9)});  // node 7 restarted as node 9
  env.self->send(r, shared_frame{sample_frame(1, 0, 7)});  // a late copy of the old one's
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
