#define BOOST_TEST_MODULE actors_trainer_kv
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/messages.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/kvstore/parameter_shard.hpp"
#include "strom/actors/worker/trainer.hpp"
#include "strom/compute/updaters/sgd.hpp"
#include "support/deterministic_system.hpp"
#include "support/small_sharing_replica.hpp"

// A kvstore trainer's replica holds the parameters of the last step it carried; before it is
// evaluated or checkpointed it takes the shards' latest (kv_pull_atom), since later steps of
// its node's other workers or of other nodes moved the model on.

using namespace strom;
using namespace strom::actors;
using strom::testing::deterministic_system;

namespace {

constexpr std::uint64_t own_node = 3;

/// What each of the two shards holds: the first and the second half of the parameters.
constexpr float first_half_value = 0.25f;
constexpr float second_half_value = -0.5f;

/// A trainer of the small replica whose two key ranges (its halves) live on two shards.
struct kv_trainer : deterministic_system {
  explicit kv_trainer(bool server_optimizer) {
    setup.replica = strom::testing::small_replica();
    const auto elements = setup.replica->net().parameters().size();
    const auto half = elements / 2;
    const compute::key_range halves[] = {{0, 0, 0, 0, half}, {1, 0, 0, half, elements - half}};
    const float values[] = {first_half_value, second_half_value};
    setup.kv.server_optimizer = server_optimizer;
    for (int i = 0; i < 2; ++i)
      setup.kv.shards.push_back({halves[i], spawn_shard(halves[i], values[i])});
    setup.origins = {own_node};
    setup.framer = std::make_shared<node_framer>(own_node, 1, elements, compute::frame_options{});
    setup.relay = caf::actor_cast<trainer_relay_actor>(me());
    setup.supervisor = caf::actor_cast<trainer_supervisor_actor>(me());
    before = std::vector<float>(setup.replica->net().parameters().begin(),
                                setup.replica->net().parameters().end());
    trainer_actor = sys.spawn(trainer, setup);
    sched.run();
  }

  /// A shard of `range` whose values are all `value`.
  caf::actor spawn_shard(const compute::key_range& range, float value) {
    parameter_shard_setup shard;
    shard.range = range;
    shard.initial.assign(range.count, value);
    shard.rule = std::make_shared<compute::sgd_updater>();
    shard.server_optimizer = setup.kv.server_optimizer;
    auto spawned = sys.spawn(parameter_shard, shard);
    spawned_shards.push_back(spawned);
    return spawned;
  }

  ~kv_trainer() {
    self->send_exit(trainer_actor, caf::exit_reason::user_shutdown);
    for (const auto& shard : spawned_shards)
      self->send_exit(shard, caf::exit_reason::user_shutdown);
    sched.run();
  }

  std::span<const float> parameters() const { return setup.replica->net().parameters(); }

  /// Asks the trainer for the shards' latest parameters and lets everything run.
  void ask() {
    self->send(trainer_actor, kv_pull_atom_v);
    sched.run();
  }

  /// Whether the trainer answered that they are in its replica (an error fails the test).
  bool answered() {
    bool got = false;
    self->receive([&](kv_pull_atom) { got = true; },
                  [](const caf::error& err) { BOOST_ERROR(to_string(err)); },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return got;
  }

  /// Whether the replica's first half holds `first` throughout and its second half `second`.
  bool halves_hold(float first, float second) const {
    const auto params = parameters();
    const auto middle = params.begin() + static_cast<std::ptrdiff_t>(params.size() / 2);
    return std::all_of(params.begin(), middle, [&](float v) { return v == first; })
           && std::all_of(middle, params.end(), [&](float v) { return v == second; });
  }

  trainer_setup setup;
  std::vector<caf::actor> spawned_shards;
  std::vector<float> before;
  caf::actor trainer_actor;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_kvstore_trainer_takes_every_range_s_latest_parameters_from_its_shard) {
  kv_trainer t{true};
  t.ask();
  BOOST_REQUIRE(t.answered());
  BOOST_TEST(t.halves_hold(first_half_value, second_half_value));
  BOOST_TEST(t.setup.framer->stats().pull_bytes > t.parameters().size_bytes());  // + headers
}

BOOST_AUTO_TEST_CASE(a_range_whose_shard_was_lost_is_pulled_from_its_new_head) {
  // A server lost while the epoch is evaluated: the pull waits for the range's re-route.
  kv_trainer t{true};
  t.self->send_exit(t.setup.kv.shards[0].shard, caf::exit_reason::kill);
  t.ask();
  BOOST_TEST(!t.answered());  // the first range waits
  constexpr float replica_value = 0.75f;
  const auto& first = t.setup.kv.shards[0].range;
  kv_reroute reroute;
  reroute.heads.push_back({first.key, first.part, first.server, first.offset, first.count,
                           t.spawn_shard(first, replica_value)});
  t.self->send(t.trainer_actor, reroute);
  t.sched.run();
  BOOST_REQUIRE(t.answered());
  BOOST_TEST(t.halves_hold(replica_value, second_half_value));
}

BOOST_AUTO_TEST_CASE(with_the_optimizer_on_the_workers_the_replica_keeps_its_parameters) {
  // The shards then hold sums, not parameters: the answer comes at once, nothing is taken.
  kv_trainer t{false};
  t.ask();
  BOOST_REQUIRE(t.answered());
  BOOST_TEST(std::equal(t.before.begin(), t.before.end(), t.parameters().begin(),
                        t.parameters().end()));
  BOOST_TEST(t.setup.framer->stats().pull_bytes == 0u);
}
