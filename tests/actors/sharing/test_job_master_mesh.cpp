#define BOOST_TEST_MODULE actors_job_master_mesh
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "support/deterministic_system.hpp"
#include "support/node_epoch_reports.hpp"

// A mesh job's job_master on the deterministic coordinator: three nodes played by scoped
// actors in a chain (fanout 1: 1 > 2 > 3) with real relays, so the middle node's loss must be
// repaired by wiring node 3 to node 1.

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t job_id = 7;

struct mesh_fixture : strom::testing::deterministic_system {
  mesh_fixture() {
    job_master_setup setup;
    setup.job_id = job_id;
    setup.submission = {"(name = \"j\")", "test.job", "", 3, 0, 0, 0, "mesh", 1};
    setup.nodes = {{{1, "a", "10.0.0.1", 4, 1, 1}, caf::actor_cast<job_agent_actor>(a)},
                   {{2, "b", "10.0.0.2", 4, 1, 1}, caf::actor_cast<job_agent_actor>(b)},
                   {{3, "c", "10.0.0.3", 4, 1, 1}, caf::actor_cast<job_agent_actor>(c)}};
    setup.scheduler = caf::actor_cast<job_scheduler_actor>(me());
    setup.clients = {caf::actor_cast<job_client_actor>(me())};
    setup.timeouts = strom::testing::job_test_timeouts();
    master = sys.spawn(job_master, setup);
    sched.run();
  }

  ~mesh_fixture() {
    self->send_exit(master, caf::exit_reason::user_shutdown);
    for (const auto& r : {relay_a, relay_b, relay_c})
      self->send_exit(r, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// `agent` answers its assignment as ready: 300 samples in batches of 10, in order, and a
  /// published relay.
  static void prepare(caf::scoped_actor& agent, std::uint64_t node_id, const caf::actor& relay) {
    bool asked = false;
    agent->receive(
      [&](const job_assignment& a) {
        asked = true;
        node_ready ready{a.job_id, node_id, relay, "j", 1, 10, 100};
        ready.train_samples = 300;
        ready.batch_size = 10;
        ready.workers = 1;
        ready.shuffle = false;
        ready.relay_endpoint = "10.0.0." + std::to_string(node_id) + ":4000";
        return ready;
      },
      caf::after(0s) >> [] {});
    BOOST_REQUIRE(asked);
  }

  /// The topology_update `agent` was sent, answered as wired; nullopt if none came.
  static std::optional<topology_update> wire(caf::scoped_actor& agent) {
    std::optional<topology_update> got;
    agent->receive(
      [&](const topology_update& u) {
        got = u;
        return wired_atom_v;
      },
      caf::after(0s) >> [] {});
    return got;
  }

  /// `agent` takes its topology_update and ends without answering it (CAF 0.17 answers a
  /// request to a crashed node only at the request's timeout, never when the node is gone);
  /// false if none came.
  static bool take_update_and_die(caf::scoped_actor& agent) {
    bool took = false;
    agent->receive(
      [&](const topology_update&) {
        took = true;
        static_cast<void>(agent->make_response_promise());  // dropped: never answered
      },
      caf::after(0s) >> [] {});
    return took;
  }

  /// Prepares the chain 1 > 2 > 3 and starts its first round.
  void start_training() {
    prepare(a, 1, relay_a);
    prepare(b, 2, relay_b);
    prepare(c, 3, relay_c);
    sched.run();
    BOOST_REQUIRE(wire(b) && wire(c));
    sched.run();
    BOOST_REQUIRE(plan(a) && plan(b) && plan(c));
  }

  static std::optional<round_plan> plan(caf::scoped_actor& agent) {
    std::optional<round_plan> got;
    agent->receive([&](const round_plan& p) { got = p; }, caf::after(0s) >> [] {});
    return got;
  }

  caf::scoped_actor a{sys};
  caf::scoped_actor b{sys};
  caf::scoped_actor c{sys};
  caf::actor relay_a = sys.spawn(relay);
  caf::actor relay_b = sys.spawn(relay);
  caf::actor relay_c = sys.spawn(relay);
  caf::actor master;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_lost_middle_node_is_bridged_and_its_frames_any_survivor_passed_count) {
  mesh_fixture env;
  env.prepare(env.a, 1, env.relay_a);
  env.prepare(env.b, 2, env.relay_b);
  env.prepare(env.c, 3, env.relay_c);
  env.sched.run();
  // The chain is wired before the first round.
  const auto b_up = env.wire(env.b);
  const auto c_up = env.wire(env.c);
  BOOST_REQUIRE(b_up && c_up);
  BOOST_TEST(b_up->parent == 1u);
  BOOST_TEST(c_up->parent == 2u);
  BOOST_TEST(!c_up->resend);
  env.sched.run();
  BOOST_REQUIRE(env.plan(env.a));
  BOOST_REQUIRE(env.plan(env.b));
  BOOST_REQUIRE(env.plan(env.c));
  // Node 2 framed three batches (samples 100-129): its child's relay passed all three, its
  // parent's only the first before the node was lost.
  strom::compute::frame_options options;
  node_framer framer{2, 1, 4, options};
  std::vector<shared_frame> frames;
  for (int i = 0; i < 3; ++i) {
    auto framed =
      framer.frame(0, 0, strom::compute::encoded_update{strom::compute::encoding::threshold,
                                                         0.1f, 4, 0, {}});
    BOOST_REQUIRE(framed);
    frames.push_back(shared_frame{framed->frame});
  }
  env.b->send(env.relay_a, frames[0]);
  for (const auto& f : frames)
    env.b->send(env.relay_c, f);
  env.sched.run();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "gone"), 0.1});
  env.sched.run();
  // Node 3 is re-attached to node 1, resending what the relays kept of the round.
  const auto bridged = env.wire(env.c);
  BOOST_REQUIRE(bridged);
  BOOST_TEST(bridged->parent == 1u);
  BOOST_TEST(bridged->resend);
  BOOST_TEST(bridged->version == 2u);
  BOOST_TEST(bridged->parent_endpoint == "10.0.0.1:4000");
  env.sched.run();
  env.a->send(env.master, strom::testing::round_done(job_id, 1, 0, 100));
  env.c->send(env.master, strom::testing::round_done(job_id, 3, 0, 100));
  env.sched.run();
  // The makeup round: node 2's 70 samples no survivor passed a frame for, split between the
  // two survivors.
  const auto makeup_a = env.plan(env.a);
  const auto makeup_c = env.plan(env.c);
  BOOST_REQUIRE(makeup_a && makeup_c);
  BOOST_REQUIRE(makeup_a->workers.size() == 1u);
  BOOST_REQUIRE(makeup_c->workers.size() == 1u);
  auto left = makeup_a->workers[0].indices;
  left.insert(left.end(), makeup_c->workers[0].indices.begin(),
              makeup_c->workers[0].indices.end());
  std::sort(left.begin(), left.end());
  BOOST_REQUIRE(left.size() == 70u);
  BOOST_TEST(left.front() == 130u);
  BOOST_TEST(left.back() == 199u);
  BOOST_TEST((makeup_a->workers[0].origins == std::vector<std::uint64_t>{1, 3}));
}

BOOST_AUTO_TEST_CASE(a_node_lost_while_it_is_rewired_holds_up_no_round) {
  mesh_fixture env;
  env.start_training();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "gone"), 0.1});
  env.sched.run();
  // Node 3 is lost while it re-attaches to node 1: the repair's request to it stays open.
  BOOST_REQUIRE(env.take_update_and_die(env.c));
  env.self->send(env.master,
                 member_lost{3, 6, make_error(strom_error::node_lost, "crashed"), 0.0});
  env.sched.run();
  env.a->send(env.master, strom::testing::round_done(job_id, 1, 0, 100));
  env.sched.run();
  // No virtual time passed (the request's timeout is 24 h): the round ended at the loss, and
  // node 1 trains the 200 samples of the lost nodes.
  const auto makeup = env.plan(env.a);
  BOOST_REQUIRE(makeup);
  BOOST_TEST(makeup->round == 1u);
  BOOST_REQUIRE(makeup->workers.size() == 1u);
  BOOST_TEST(makeup->workers[0].indices.size() == 200u);
}
