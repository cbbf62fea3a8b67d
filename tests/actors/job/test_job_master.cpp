#define BOOST_TEST_MODULE actors_job_master
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master.hpp"
#include "strom/actors/sharing/node_framer.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "support/deterministic_system.hpp"
#include "support/node_epoch_reports.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t job_id = 7;
constexpr std::uint32_t epochs = 2;

/// A job_master on the deterministic coordinator for two nodes played by scoped actors; the
/// test's own actor plays the scheduler and the client, so it sees what both are told.
struct job_fixture : strom::testing::deterministic_system {
  job_fixture() {
    job_master_setup setup;
    setup.job_id = job_id;
    setup.submission = {"(name = \"j\")", "test.job", "", 2, 0, 3};  // may grow to 3
    setup.nodes = {{{1, "a", "10.0.0.1", 4, 2, 1}, caf::actor_cast<job_agent_actor>(a)},
                   {{2, "b", "10.0.0.2", 4, 1, 1}, caf::actor_cast<job_agent_actor>(b)}};
    setup.scheduler = caf::actor_cast<job_scheduler_actor>(me());
    setup.clients = {caf::actor_cast<job_client_actor>(me())};
    setup.timeouts = strom::testing::job_test_timeouts();
    master = sys.spawn(job_master, setup);
    self->monitor(master);
    sched.run();
  }

  ~job_fixture() {
    self->send_exit(master, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// `agent`'s assignment, answered as ready with `relay_actor`: the training set has 300
  /// samples in batches of 10, in order (no shuffle).
  job_assignment prepare(caf::scoped_actor& agent, std::uint64_t node_id,
                         const caf::actor& relay_actor) {
    std::optional<job_assignment> got;
    agent->receive(
      [&](const job_assignment& a) {
        got = a;
        node_ready ready{a.job_id, node_id, relay_actor, "j", epochs, 10, 100};
        ready.train_samples = 300;
        ready.batch_size = 10;
        ready.workers = a.workers;
        ready.shuffle = false;
        return ready;
      },
      caf::after(0s) >> [] {});
    BOOST_REQUIRE(got);
    return *got;
  }

  /// The round plan `agent` was sent, if any.
  static std::optional<round_plan> plan(caf::scoped_actor& agent) {
    std::optional<round_plan> got;
    agent->receive([&](const round_plan& p) { got = p; }, caf::after(0s) >> [] {});
    return got;
  }

  /// Whether `agent` was told to start round `round`.
  static bool started(caf::scoped_actor& agent, std::uint32_t round) {
    const auto got = plan(agent);
    return got && got->round == round;
  }

  /// `agent` answers the request to evaluate `epoch`; false if none came.
  static bool evaluate(caf::scoped_actor& agent, std::uint32_t epoch) {
    bool asked = false;
    agent->receive(
      [&](evaluate_atom, std::uint64_t, std::uint32_t e) {
        asked = e == epoch;
        return epoch_check{{0.9, 0.3}, ""};
      },
      caf::after(0s) >> [] {});
    return asked;
  }

  /// `agent` answers the stop of the job with its counts.
  static bool stop(caf::scoped_actor& agent, std::uint64_t node_id) {
    bool stopped = false;
    agent->receive(
      [&](stop_atom, std::uint64_t id) {
        stopped = id == job_id;
        node_sharing_report counts{id, node_id, {}, {}};
        counts.sent.updates = 1;
        counts.sent.bytes_sent = 10;
        return counts;
      },
      caf::after(0s) >> [] {});
    return stopped;
  }

  static node_epoch_report round_done(std::uint64_t node_id, std::uint32_t round,
                                      std::uint64_t samples = 100,
                                      std::vector<std::uint64_t> steps = {}) {
    return strom::testing::round_done(job_id, node_id, round, samples, std::move(steps));
  }

  /// Node 2's one worker sends `count` (empty) update frames of round 0 through `hub`.
  void frames_of_b(const caf::actor& hub, int count) {
    strom::compute::frame_options options;
    node_framer framer{2, 1, 4, options};
    for (int i = 0; i < count; ++i) {
      auto framed =
        framer.frame(0, 0, strom::compute::encoded_update{strom::compute::encoding::threshold,
                                                           0.1f, 4, 0, {}});
      BOOST_REQUIRE(framed);
      b->send(hub, shared_frame{framed->frame});
    }
  }

  /// Node 1 alone trains the last epoch (round `round`, all 300 samples), evaluates it and
  /// is stopped; the job's outcome.
  std::optional<job_finished> last_epoch_on_a(std::uint32_t round) {
    a->send(master, round_done(1, round, 300));
    sched.run();
    BOOST_TEST(evaluate(a, epochs - 1));
    sched.run();
    BOOST_TEST(stop(a, 1));
    sched.run();
    return outcome();
  }

  /// Both nodes prepared the job and started round 0; node 1's assignment.
  job_assignment start_both() {
    auto assigned = prepare(a, 1, relay_a);
    prepare(b, 2, relay_b);
    sched.run();
    BOOST_REQUIRE(started(a, 0));
    BOOST_REQUIRE(started(b, 0));
    return assigned;
  }

  /// Both nodes prepared the job: it trains.
  void prepare_both() {
    prepare(a, 1, relay_a);
    prepare(b, 2, relay_b);
    sched.run();
  }

  /// Both nodes train round 0 and report it: the master asks a, the first, to evaluate.
  void train_round_0() {
    prepare_both();
    BOOST_TEST(started(a, 0));
    BOOST_TEST(started(b, 0));
    a->send(master, round_done(1, 0));
    b->send(master, round_done(2, 0));
    sched.run();
  }

  /// Whether the job master has ended (its down message reached the test).
  bool ended() {
    bool down = false;
    self->receive([&](const caf::down_msg& d) { down = d.source == master.address(); },
                  caf::after(0s) >> [] {});
    return down;
  }

  /// The outcome the test (as scheduler and as client) got: it must get it twice.
  std::optional<job_finished> outcome() {
    std::optional<job_finished> first;
    std::optional<job_finished> second;
    self->receive([&](const job_finished& f) { first = f; }, caf::after(0s) >> [] {});
    self->receive([&](const job_finished& f) { second = f; }, caf::after(0s) >> [] {});
    BOOST_TEST(static_cast<bool>(second));
    return first;
  }

  caf::scoped_actor a{sys};
  caf::scoped_actor b{sys};
  caf::actor relay_a = sys.spawn(relay);
  caf::actor relay_b = sys.spawn(relay);
  caf::actor master;
};

} // namespace

BOOST_AUTO_TEST_CASE(assigns_ranks_global_worker_ranks_and_one_hub_to_its_nodes) {
  job_fixture env;
  const auto first = env.prepare(env.a, 1, env.relay_a);
  const auto second = env.prepare(env.b, 2, env.relay_b);
  BOOST_TEST(first.job_id == job_id);
  BOOST_TEST(first.rank == 0u);
  BOOST_TEST(second.rank == 1u);
  BOOST_TEST(second.first_worker == 2u);
  BOOST_TEST(second.total_workers == 3u);
  BOOST_TEST((first.origins == std::vector<std::uint64_t>{1, 2}));
  BOOST_TEST((first.hub == second.hub));
}

BOOST_AUTO_TEST_CASE(starts_the_first_epoch_once_every_node_is_ready_and_reports_training) {
  job_fixture env;
  env.prepare(env.a, 1, env.relay_a);
  env.sched.run();
  BOOST_TEST(!env.started(env.a, 0));  // b is not ready yet
  env.prepare(env.b, 2, env.relay_b);
  env.sched.run();
  BOOST_TEST(env.started(env.a, 0));
  BOOST_TEST(env.started(env.b, 0));
  std::optional<job_status> last;
  while (auto status = [&] {
           std::optional<job_status> got;
           env.self->receive([&](const job_status& s) { got = s; }, caf::after(0s) >> [] {});
           return got;
         }())
    last = status;
  BOOST_REQUIRE(last);
  BOOST_TEST(last->state == "training");
  BOOST_TEST(last->epochs == epochs);
}

BOOST_AUTO_TEST_CASE(paces_every_epoch_then_stops_its_nodes_reports_success_and_ends) {
  job_fixture env;
  env.prepare_both();
  for (std::uint32_t epoch = 0; epoch < epochs; ++epoch) {
    BOOST_TEST(env.started(env.a, epoch));
    BOOST_TEST(env.started(env.b, epoch));
    env.a->send(env.master, env.round_done(1, epoch, 200));
    env.sched.run();
    BOOST_TEST(!env.evaluate(env.a, epoch));  // b has not reported the epoch yet
    env.b->send(env.master, env.round_done(2, epoch));
    env.sched.run();
    BOOST_TEST(env.evaluate(env.a, epoch));  // the first node evaluates
    env.sched.run();
  }
  BOOST_TEST(env.stop(env.a, 1));
  BOOST_TEST(env.stop(env.b, 2));
  env.sched.run();
  const auto end = env.outcome();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded);
  BOOST_TEST(end->report.epochs == epochs);
  BOOST_TEST(end->report.bytes_sent == 20u);
  BOOST_TEST(end->report.train_samples == 600u);
  BOOST_TEST(end->report.test_accuracy == 0.9);
  BOOST_TEST(end->report.nodes_lost == 0u);
  BOOST_TEST(env.ended());
}

BOOST_AUTO_TEST_CASE(plans_each_worker_a_partition_of_the_epoch_and_every_node_as_origin) {
  job_fixture env;
  env.prepare_both();
  const auto first = env.plan(env.a);
  const auto second = env.plan(env.b);
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(second);
  BOOST_REQUIRE(first->workers.size() == 2u);
  BOOST_REQUIRE(second->workers.size() == 1u);
  BOOST_TEST(first->workers[1].rank == 1u);
  BOOST_TEST(second->workers[0].rank == 2u);
  BOOST_TEST(second->workers[0].ranks == 3u);
  BOOST_TEST((second->workers[0].origins == std::vector<std::uint64_t>{1, 2}));
}

BOOST_AUTO_TEST_CASE(a_lost_node_leaves_the_samples_it_framed_no_update_for_to_the_survivors) {
  job_fixture env;
  const auto assigned = env.start_both();
  // Node 2's one worker got three frames through the hub (batches 0-2 of samples 200-299).
  env.frames_of_b(assigned.hub, 3);
  env.sched.run();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "gone"), 0.4});
  env.sched.run();
  // a stops waiting for b's frames and drains.
  bool forgotten = false;
  env.a->receive([&](forget_atom, std::uint64_t job, std::uint64_t origin) {
    forgotten = job == job_id && origin == 2;
  }, caf::after(0s) >> [] {});
  BOOST_TEST(forgotten);
  env.a->send(env.master, env.round_done(1, 0, 200));
  env.sched.run();
  // The makeup round: b's 70 samples it sent no frame for, split among a's two workers.
  const auto makeup = env.plan(env.a);
  BOOST_REQUIRE(makeup);
  BOOST_TEST(makeup->round == 1u);
  BOOST_REQUIRE(makeup->workers.size() == 2u);
  BOOST_TEST(makeup->workers[0].ranks == 0u);
  BOOST_REQUIRE(makeup->workers[0].indices.size() == 35u);
  BOOST_TEST(makeup->workers[0].indices.front() == 230u);
  BOOST_TEST(makeup->workers[1].indices.back() == 299u);
  BOOST_TEST((makeup->workers[0].origins == std::vector<std::uint64_t>{1}));
  env.a->send(env.master, env.round_done(1, 1, 70));
  env.sched.run();
  BOOST_TEST(env.evaluate(env.a, 0));
  env.sched.run();
  // The next epoch is partitioned among the survivor's workers only.
  const auto next = env.plan(env.a);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->round == 2u);
  BOOST_TEST(next->workers[1].rank == 1u);
  BOOST_TEST(next->workers[1].ranks == 2u);
  const auto end = env.last_epoch_on_a(2);
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded, end->failure);
  BOOST_TEST(end->report.nodes_lost == 1u);
  BOOST_TEST(end->report.failure_detection_seconds == 0.4);
  BOOST_TEST(end->report.train_samples == 600u);  // every epoch covered the training set
  BOOST_TEST(end->report.topology.version == 2u);
  BOOST_TEST(env.ended());
}

BOOST_AUTO_TEST_CASE(a_node_lost_after_its_frames_all_passed_but_before_its_report_counts_its_share) {
  // Node 2 framed all 10 batches of its 100 samples and its drain marker passed the hub, but
  // it was lost before its epoch report came (a loaded machine delays the report): its share
  // was trained, so it counts, and nothing is made up or trained twice.
  job_fixture env;
  const auto assigned = env.start_both();
  env.frames_of_b(assigned.hub, 10);
  env.b->send(assigned.hub, drain_marker{2, 0});
  env.sched.run();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "gone"), 0.4});
  env.sched.run();
  env.a->send(env.master, env.round_done(1, 0, 200));
  env.sched.run();
  // No makeup round: epoch 0 is evaluated at once, and epoch 1 is the next round.
  BOOST_TEST(env.evaluate(env.a, 0));
  env.sched.run();
  const auto next = env.plan(env.a);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->round == 1u);
  BOOST_TEST(next->workers[1].ranks == 2u);
  const auto end = env.last_epoch_on_a(1);
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded, end->failure);
  BOOST_TEST(end->report.train_samples == 600u);  // b's 100 samples of epoch 0 counted
  BOOST_TEST(end->report.samples_redone == 0u);
}

BOOST_AUTO_TEST_CASE(a_node_lost_while_the_epoch_is_evaluated_does_not_end_the_round_again) {
  job_fixture env;
  env.prepare_both();
  BOOST_REQUIRE(env.started(env.a, 0));
  env.a->send(env.master, env.round_done(1, 0, 200));
  env.b->send(env.master, env.round_done(2, 0));
  env.sched.run();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "b lost")});
  env.sched.run();
  BOOST_TEST(env.evaluate(env.a, 0));
  env.sched.run();
  BOOST_TEST(!env.evaluate(env.a, 0));  // asked once
  const auto next = env.plan(env.a);    // the next epoch goes on without b
  BOOST_REQUIRE(next);
  BOOST_TEST(next->round == 1u);
  BOOST_TEST(next->workers[0].ranks == 2u);
}

BOOST_AUTO_TEST_CASE(a_lost_evaluator_hands_the_evaluation_to_the_next_node_at_once) {
  // A request to a node that dies is never answered; waiting for its timeout (minutes) would
  // hold the whole job.
  job_fixture env;
  env.train_round_0();  // a, the first node, is asked to evaluate and does not answer
  env.self->send(env.master, member_lost{1, 5, make_error(strom_error::node_lost, "a lost")});
  env.sched.run();
  BOOST_TEST(env.evaluate(env.b, 0));  // no time passed
  env.sched.run();
  const auto next = env.plan(env.b);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->round == 1u);
  BOOST_TEST(env.evaluate(env.a, 0));  // the lost node's late answer ends nothing again
  env.sched.run();
  BOOST_TEST(!env.plan(env.b).has_value());
}

BOOST_AUTO_TEST_CASE(an_evaluator_gone_before_its_loss_is_known_hands_the_evaluation_on) {
  // CAF answers a request to an actor that ended with request_receiver_down, which may come
  // before the scheduler's word of the node's loss: the job goes on, as with the loss alone.
  job_fixture env;
  env.train_round_0();
  bool asked = false;
  env.a->receive(
    [&](evaluate_atom, std::uint64_t, std::uint32_t) -> caf::result<epoch_check> {
      asked = true;
      return caf::make_error(caf::sec::request_receiver_down);
    },
    caf::after(0s) >> [] {});
  BOOST_TEST(asked);
  env.sched.run();
  env.self->send(env.master, member_lost{1, 5, make_error(strom_error::node_lost, "a lost")});
  env.sched.run();
  BOOST_TEST(env.evaluate(env.b, 0));
  env.sched.run();
  const auto next = env.plan(env.b);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->round == 1u);
}

BOOST_AUTO_TEST_CASE(losing_every_node_fails_the_job_naming_them) {
  job_fixture env;
  env.prepare_both();
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "b lost")});
  env.self->send(env.master, member_lost{1, 6, make_error(strom_error::node_lost, "a lost")});
  env.sched.run();
  const auto end = env.outcome();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(!end->cancelled);
  BOOST_TEST(end->failure.find("every node of the job was lost") != std::string::npos,
             end->failure);
  BOOST_TEST(end->failure.find("b lost, a lost") != std::string::npos, end->failure);
  BOOST_TEST(env.ended());
}

// #40: a node lost while the job prepares (loading its data) is left out as a node lost in
// training would be: the others start without it and train all of the data.
BOOST_AUTO_TEST_CASE(a_node_lost_while_the_job_is_prepared_is_left_out_and_the_others_train) {
  job_fixture env;
  env.prepare(env.a, 1, env.relay_a);
  env.sched.run();
  BOOST_TEST(!env.plan(env.a));  // b has not prepared yet
  env.self->send(env.master,
                 member_lost{2, 5, make_error(strom_error::node_lost, "node 2 (b) lost: gone")});
  env.sched.run();
  const auto round = env.plan(env.a);
  BOOST_REQUIRE(round);
  BOOST_TEST(round->round == 0u);
  for (const auto& work : round->workers) {
    BOOST_TEST(work.origins == std::vector<std::uint64_t>{1});
    BOOST_TEST(work.ranks == 2u);  // a's two workers share the epoch
  }
  env.a->send(env.master, env.round_done(1, 0, 300));
  env.sched.run();
  BOOST_TEST(env.evaluate(env.a, 0));
  env.sched.run();
  BOOST_REQUIRE(env.started(env.a, 1));
  const auto end = env.last_epoch_on_a(1);
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded, end->failure);
  BOOST_TEST(end->report.nodes_lost == 1u);
  BOOST_TEST(end->report.train_samples == 600u);
}

BOOST_AUTO_TEST_CASE(every_node_lost_while_the_job_is_prepared_fails_it_naming_the_moment) {
  job_fixture env;
  env.self->send(env.master, member_lost{1, 5, make_error(strom_error::node_lost, "a lost")});
  env.self->send(env.master, member_lost{2, 5, make_error(strom_error::node_lost, "b lost")});
  env.sched.run();
  const auto end = env.outcome();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(end->failure == "every node of the job was lost while the job was preparing: a lost, "
                             "b lost");
}

BOOST_AUTO_TEST_CASE(a_cancel_ends_the_job_as_cancelled_and_a_second_is_refused) {
  job_fixture env;
  env.prepare_both();
  caf::scoped_actor canceller{env.sys};
  const auto cancel = [&] {
    canceller->send(env.master, cancel_atom_v, job_id);
    env.sched.run();
    std::optional<submit_reply> reply;
    canceller->receive([&](const submit_reply& r) { reply = r; }, caf::after(0s) >> [] {});
    BOOST_REQUIRE(reply);
    return *reply;
  };
  BOOST_TEST(cancel().accepted);
  const auto end = env.outcome();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->cancelled);
  BOOST_TEST(end->failure == "cancelled by a client");
  const auto again = cancel();
  BOOST_TEST(!again.accepted);
  BOOST_TEST(again.reason == "job 7 has already ended (cancelled)");
}

BOOST_AUTO_TEST_CASE(a_job_whose_nodes_fall_silent_fails_after_the_silence_limit) {
  job_fixture env;
  env.prepare_both();
  env.sched.advance_time(24h);
  env.sched.run();
  const auto end = env.outcome();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->failure.find("no word from the job's nodes for 86400 s") != std::string::npos,
             end->failure);
}

BOOST_AUTO_TEST_CASE(a_node_that_joins_mid_round_cuts_it_takes_a_snapshot_and_trains_the_rest) {
  job_fixture env;
  caf::scoped_actor c{env.sys};
  const auto relay_c = env.sys.spawn(relay);
  env.prepare(env.a, 1, env.relay_a);
  env.prepare(env.b, 2, env.relay_b);
  env.sched.run();
  BOOST_REQUIRE(env.started(env.a, 0));
  BOOST_REQUIRE(env.started(env.b, 0));
  env.self->send(env.master, member_joined{{3, "c", "10.0.0.3", 4, 1, 1},
                                           caf::actor_cast<caf::actor>(c), 9});
  env.sched.run();
  bool taken = false;
  env.self->receive([&](bool yes) { taken = yes; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(taken);
  const auto assigned = env.prepare(c, 3, relay_c);
  BOOST_TEST((assigned.origins == std::vector<std::uint64_t>{1, 2, 3}));
  env.sched.run();
  // The running round is cut short on the live nodes.
  for (auto* agent : {&env.a, &env.b}) {
    bool cut = false;
    (*agent)->receive([&](cut_atom, std::uint64_t, std::uint32_t round) { cut = round == 0; },
                      caf::after(0s) >> [] {});
    BOOST_TEST(cut);
  }
  // a's first worker had done 5 of its 10 batches, the rest all of theirs.
  env.a->send(env.master, env.round_done(1, 0, 150, {5, 10}));
  env.b->send(env.master, env.round_done(2, 0, 100, {10}));
  env.sched.run();
  // Before the makeup round, c restores from a live node (the first).
  bool restored = false;
  c->receive(
    [&](restore_atom, std::uint64_t, const caf::actor& source) {
      restored = source == caf::actor_cast<caf::actor>(env.a);
      return snapshot_sent{1, 3, 300};
    },
    caf::after(0s) >> [] {});
  BOOST_REQUIRE(restored);
  env.sched.run();
  const auto makeup = env.plan(c);
  BOOST_REQUIRE(makeup);
  BOOST_TEST(makeup->round == 1u);
  BOOST_TEST((makeup->workers[0].origins == std::vector<std::uint64_t>{1, 2, 3}));
  std::vector<std::uint32_t> left;
  for (auto* agent : {&env.a, &env.b}) {
    const auto part = env.plan(*agent);
    BOOST_REQUIRE(part);
    for (const auto& work : part->workers)
      left.insert(left.end(), work.indices.begin(), work.indices.end());
  }
  left.insert(left.end(), makeup->workers[0].indices.begin(), makeup->workers[0].indices.end());
  std::vector<std::uint32_t> expected;
  for (std::uint32_t i = 50; i < 100; ++i)  // a's first partition past its 5 batches
    expected.push_back(i);
  BOOST_TEST(left == expected);
  env.a->send(env.master, env.round_done(1, 1, 26));
  env.b->send(env.master, env.round_done(2, 1, 12));
  c->send(env.master, env.round_done(3, 1, 12));
  env.sched.run();
  BOOST_TEST(env.evaluate(env.a, 0));
  env.sched.run();
  const auto next = env.plan(c);  // the next epoch is partitioned among all four workers
  BOOST_REQUIRE(next);
  BOOST_TEST(next->workers[0].rank == 3u);
  BOOST_TEST(next->workers[0].ranks == 4u);
  const auto end = [&] {
    env.a->send(env.master, env.round_done(1, 2, 150));
    env.b->send(env.master, env.round_done(2, 2, 75));
    c->send(env.master, env.round_done(3, 2, 75));
    env.sched.run();
    BOOST_TEST(env.evaluate(env.a, 1));
    env.sched.run();
    for (auto* agent : {&env.a, &env.b})
      BOOST_TEST(env.stop(*agent, agent == &env.a ? 1 : 2));
    BOOST_TEST(env.stop(c, 3));
    env.sched.run();
    return env.outcome();
  }();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded, end->failure);
  BOOST_TEST(end->report.nodes_joined == 1u);  // no node was lost: the job grew
  BOOST_TEST(end->report.nodes_restored == 0u);
  BOOST_TEST(end->report.train_samples == 600u);
}

BOOST_AUTO_TEST_CASE(a_job_below_its_minimum_pauses_and_fails_naming_the_lost_after_the_timeout) {
  job_master_setup setup;
  strom::testing::deterministic_system env;
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  setup.job_id = job_id;
  setup.submission = {"(name = \"j\")", "test.job", "", 2, 2};
  setup.nodes = {{{1, "a", "10.0.0.1", 4, 1, 1}, caf::actor_cast<job_agent_actor>(a)},
                 {{2, "b", "10.0.0.2", 4, 1, 1}, caf::actor_cast<job_agent_actor>(b)}};
  setup.scheduler = caf::actor_cast<job_scheduler_actor>(env.me());
  setup.timeouts = strom::testing::job_test_timeouts();
  setup.timeouts.rejoin_timeout = 30s;
  const auto master = env.sys.spawn(job_master, setup);
  env.sched.run();
  for (auto* agent : {&a, &b})
    (*agent)->receive(
      [&](const job_assignment& assigned) {
        node_ready ready{assigned.job_id, agent == &a ? 1u : 2u, env.sys.spawn(relay), "j",
                         epochs, 10, 100};
        ready.train_samples = 20;
        return ready;
      },
      caf::after(0s) >> [] {});
  env.sched.run();
  env.self->send(master, member_lost{2, 5, make_error(strom_error::node_lost, "b lost"), 0.1});
  env.sched.run();
  a->send(master, node_epoch_report{job_id, 1, 0, {1.0, 1, 10, 1.0}, {1}, 1, {}});
  env.sched.run();
  env.sched.advance_time(30s);
  env.sched.run();
  std::optional<job_finished> end;
  for (int i = 0; i < 10 && !end; ++i)  // job_status updates come first
    env.self->receive([&](const job_finished& f) { end = f; }, [](const job_status&) {},
                      caf::after(0s) >> [] {});
  BOOST_REQUIRE(end);
  BOOST_TEST(end->failure.find("no nodes joined within 30 s") != std::string::npos,
             end->failure);
  BOOST_TEST(end->failure.find("b lost") != std::string::npos, end->failure);
  env.self->send_exit(master, caf::exit_reason::user_shutdown);
  env.sched.run();
}

namespace {

/// The stall verdict of the latest job_status the test (as scheduler) got, if one came; the
/// other messages waiting are dropped.
std::optional<std::string> latest_stall(job_fixture& env) {
  std::optional<std::string> stall;
  for (bool more = true; more;)
    env.self->receive([&](const job_status& s) { stall = s.stall; }, [](caf::message&) {},
                      caf::after(0s) >> [&] { more = false; });
  return stall;
}

/// Moves virtual time on by `span` in quarter stall warnings, running what falls due.
void pass(job_fixture& env, caf::timespan span) {
  const auto step = strom::testing::job_test_timeouts().stall_warning / 4;
  for (caf::timespan passed{0}; passed < span; passed += step) {
    env.sched.advance_time(step);
    env.sched.run();
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(the_node_everyone_waits_for_is_named_in_status_until_it_moves) {
  job_fixture env;
  env.prepare_both();
  BOOST_REQUIRE(env.started(env.a, 0));
  BOOST_REQUIRE(env.started(env.b, 0));
  env.a->send(env.master, node_progress{job_id, 1, 0, 4, 40, 2.0, 0, {}, 0});
  env.b->send(env.master, node_progress{job_id, 2, 0, 2, 20, 1.0, 0, {}, 0});
  env.sched.run();
  BOOST_TEST(latest_stall(env).value_or("").empty());
  pass(env, strom::testing::job_test_timeouts().stall_warning);
  // Node a's two workers wait for node b's frames; b says nothing.
  bool asked = false;
  env.a->receive(
    [&](stall_atom, std::uint64_t id) {
      asked = id == job_id;
      return node_activity{job_id, 1, {{0, 0, 2, true, true, false, {2}},
                                       {1, 0, 2, true, true, false, {2}}}};
    },
    caf::after(0s) >> [] {});
  BOOST_REQUIRE(asked);
  env.sched.run();
  const auto stall = latest_stall(env).value_or("");
  BOOST_TEST(stall.find("waiting for node 2 (b at 10.0.0.2)") != std::string::npos, stall);
  BOOST_TEST(stall.find("last reported step 2 of round 0") != std::string::npos, stall);
  BOOST_TEST(stall.find("2 workers wait for it") != std::string::npos, stall);
  // b moves again, and with it a: the next tick clears the verdict.
  env.b->send(env.master, node_progress{job_id, 2, 0, 3, 30, 1.5, 0, {}, 0});
  env.a->send(env.master, node_progress{job_id, 1, 0, 6, 60, 3.0, 0, {}, 0});
  env.sched.run();
  pass(env, strom::testing::job_test_timeouts().stall_warning / 4);
  const auto cleared = latest_stall(env);
  BOOST_REQUIRE(cleared);
  BOOST_TEST(cleared->empty(), *cleared);
}
