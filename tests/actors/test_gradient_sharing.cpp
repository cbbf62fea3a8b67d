#define BOOST_TEST_MODULE actors_gradient_sharing
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/accumulator.hpp"
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

/// A frame from origin 7 with `sequence`, carrying +1 at the first 8 elements.
compute::frame sample_frame(std::uint64_t sequence) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::fixed_threshold_options{1.0f}};
  compute::threshold_encoder encoder{elements, options};
  std::vector<float> update(elements, 0.0f);
  std::fill(update.begin(), update.begin() + 8, 1.5f);
  auto encoded = encoder.encode(update);
  BOOST_REQUIRE(encoded);
  auto built = compute::build_update_frame({7, 0, sequence, 1, 0, 0}, *encoded);
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

BOOST_AUTO_TEST_CASE(accumulator_frames_each_workers_encoded_update_in_node_sequence) {
  deterministic_system env;
  accumulator_setup setup;
  setup.node_id = 3;
  setup.workers = 2;
  setup.elements = elements;
  setup.relay = caf::actor_cast<caf::actor>(env.self);
  auto acc = env.sys.spawn(accumulator, setup);
  // What a trainer sends: its update 0.6 at the first 8 elements, encoded negated at 0.5.
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::fixed_threshold_options{0.5f}};
  compute::threshold_encoder encoder{elements, options};
  std::vector<float> values(elements, 0.1f);
  std::fill(values.begin(), values.begin() + 8, 0.6f);
  const auto encoded = encoder.encode(values, -1.0f);
  BOOST_REQUIRE(encoded);
  worker_update update;
  update.epoch = 2;
  update.enc = static_cast<std::uint8_t>(encoded->enc);
  update.threshold = encoded->threshold;
  update.elements = elements;
  update.values = encoded->values;
  update.payload.resize(encoded->payload.size() / sizeof(std::uint32_t));
  std::memcpy(update.payload.data(), encoded->payload.data(), encoded->payload.size());
  for (std::uint32_t worker : {1u, 0u}) {
    update.worker = worker;
    update.iteration = 1;
    env.self->send(acc, update);
  }
  env.sched.run();
  std::vector<compute::frame> received;
  env.self->receive_while([&] { return received.size() < 2; })(
    [&](const shared_frame& f) { received.push_back(f.value); });
  compute::frame_workspace ws;
  for (std::uint64_t k = 0; k < received.size(); ++k) {
    auto view = compute::read_update_frame(received[k], ws);
    BOOST_REQUIRE(view);
    BOOST_TEST(view->header.origin_node == 3u);
    BOOST_TEST(view->header.worker == (k == 0 ? 1u : 0u));
    BOOST_TEST(view->header.sequence == k);
    BOOST_TEST(view->header.epoch == 2u);
    // The clock: updates of the slowest worker included, 0 until both have sent one.
    BOOST_TEST(view->header.iteration == k);
    std::vector<float> model(elements, 0.0f);
    BOOST_REQUIRE(compute::apply_update_frame(received[k], model, ws));
    for (std::size_t i = 0; i < elements; ++i)
      BOOST_TEST(model[i] == (i < 8 ? -0.5f : 0.0f));
  }
  env.self->send(acc, stats_atom_v);
  env.sched.run();
  env.self->receive([&](const accumulator_stats& s) {
    BOOST_TEST(s.updates == 2u);
    BOOST_TEST(s.frames_sent == 2u);
    BOOST_TEST(s.bytes_sent == received[0].size() + received[1].size());
    BOOST_TEST(s.dense_bytes_equivalent == 2u * 4u * elements);
    BOOST_TEST(s.density_sum == 2.0 * 8 / elements);
    BOOST_TEST(s.threshold == 0.5f);
  });
  env.self->send_exit(acc, caf::exit_reason::user_shutdown);
  env.sched.run();
}

BOOST_AUTO_TEST_CASE(accumulator_stops_naming_a_malformed_update) {
  struct malformed {
    const char* what;
    worker_update update;
  };
  worker_update good;
  good.elements = elements;
  auto slot = good;
  slot.worker = 2;
  auto size = good;
  size.elements = elements + 1;
  auto enc = good;
  enc.enc = 9;
  auto values = good;
  values.values = 3;  // but no payload
  for (const auto& [what, update] : {malformed{"worker 2", slot}, malformed{"65 elements", size},
                                     malformed{"encoding 9", enc}, malformed{"3 values", values}}) {
    deterministic_system env;
    accumulator_setup setup;
    setup.workers = 2;
    setup.elements = elements;
    setup.relay = caf::actor_cast<caf::actor>(env.self);
    auto acc = env.sys.spawn(accumulator, setup);
    env.self->monitor(acc);
    env.self->send(acc, update);
    env.sched.run();
    env.self->receive(
      [&, what = what](const caf::down_msg& down) {
        const auto reason = env.sys.render(down.reason);
        BOOST_TEST(reason.find(what) != std::string::npos, reason << " names " << what);
      },
      caf::after(std::chrono::seconds(0)) >> [] { BOOST_FAIL("the accumulator did not stop"); });
  }
}

BOOST_AUTO_TEST_CASE(worker_update_survives_serialisation) {
  deterministic_system env;
  worker_update out;
  out.worker = 1;
  out.iteration = 12;
  out.epoch = 3;
  out.enc = static_cast<std::uint8_t>(compute::encoding::bitmap);
  out.threshold = 0.25f;
  out.elements = elements;
  out.values = 5;
  out.payload = {1u, 0x80000001u, 7u, 42u};
  std::vector<char> buffer;
  caf::binary_serializer sink{env.sys, buffer};
  BOOST_REQUIRE(!sink(out));
  caf::binary_deserializer source{env.sys, buffer};
  worker_update in;
  BOOST_REQUIRE(!source(in));
  BOOST_TEST(in.worker == out.worker);
  BOOST_TEST(in.iteration == out.iteration);
  BOOST_TEST(in.epoch == out.epoch);
  BOOST_TEST(in.enc == out.enc);
  BOOST_TEST(in.threshold == out.threshold);
  BOOST_TEST(in.elements == out.elements);
  BOOST_TEST(in.values == out.values);
  BOOST_TEST(in.payload == out.payload);
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
