#define BOOST_TEST_MODULE actors_scheduler
#include <boost/test/unit_test.hpp>

#include <cmath>

#include <chrono>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include <cstring>

#include "strom/actors/sharing/relay.hpp"
#include "strom/actors/cluster/scheduler.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/runtime/job/state_dir.hpp"
#include "support/deterministic_system.hpp"
#include "support/scratch_dir.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

/// Timeouts for tests that are not about heartbeats: pings never time out.
scheduler_setup quiet_setup() {
  scheduler_setup setup;
  setup.timeouts.heartbeat_interval = 1s;
  setup.timeouts.heartbeat_timeout = 24h;
  setup.timeouts.prepare_timeout = 10s;
  setup.timeouts.answer_timeout = 10s;
  setup.timeouts.silence_limit = 24h;
  return setup;
}

/// The first message of type T waiting for `client`, taken out.
template <class T>
std::optional<T> gets(caf::scoped_actor& client) {
  std::optional<T> got;
  client->receive([&](const T& x) { got = x; }, caf::after(0s) >> [] {});
  return got;
}

/// A scheduler on the deterministic coordinator; scoped actors play the nodes and clients,
/// so every message a test expects can be checked where it arrives.
struct cluster_fixture : strom::testing::deterministic_system {
  explicit cluster_fixture(scheduler_setup setup = quiet_setup())
    : master{sys.spawn(scheduler, setup)} {}

  ~cluster_fixture() {
    self->send_exit(master, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// `agent` asks to join as `name`; returns the scheduler's answer.
  join_reply join(caf::scoped_actor& agent, const std::string& name, std::uint32_t workers = 1,
                  std::uint32_t version = protocol_version) {
    agent->send(master, join_request{version, name, "10.0.0.1", 4, workers, {}});
    sched.run();
    std::optional<join_reply> reply;
    agent->receive([&](const join_reply& r) { reply = r; }, caf::after(0s) >> [] {});
    BOOST_REQUIRE(reply);
    return *reply;
  }

  /// The client (`self`) submits a job for every joined node.
  submit_reply submit() {
    self->send(master, submit_atom_v, job_submission{"(name = \"j\")", "test.job", "", 0});
    sched.run();
    std::optional<submit_reply> reply;
    self->receive([&](const submit_reply& r) { reply = r; }, caf::after(0s) >> [] {});
    BOOST_REQUIRE(reply);
    return *reply;
  }

  /// The assignment that reached `agent`, answered with `answer` (nothing when empty).
  job_assignment assignment_for(caf::scoped_actor& agent, std::optional<node_ready> answer) {
    std::optional<job_assignment> got;
    agent->receive(
      [&](const job_assignment& a) -> caf::result<node_ready> {
        got = a;
        if (!answer)
          return agent->make_response_promise<node_ready>();
        answer->job_id = a.job_id;
        return *answer;
      },
      caf::after(0s) >> [] {});
    BOOST_REQUIRE(got);
    return *got;
  }

  /// The cluster's status as a client (`self`) asks for it.
  std::optional<cluster_status> status() {
    self->send(master, status_atom_v);
    sched.run();
    return client_gets<cluster_status>();
  }

  /// What `self` (the client) got last of type T.
  template <class T>
  std::optional<T> client_gets() {
    return gets<T>(self);
  }

  caf::actor master;
};

node_ready ready_with(const caf::actor& relay_actor, std::uint64_t node_id) {
  // job id 0: the assignment's is filled in by assignment_for
  node_ready ready{0, node_id, relay_actor, "j", 2, 10, 100};
  ready.train_samples = 200;
  ready.batch_size = 10;
  return ready;
}

/// A node's report of round `round` (one round an epoch while no node is lost).
node_epoch_report epoch_done(std::uint64_t job_id, std::uint64_t node_id, std::uint32_t round) {
  node_epoch_report r;
  r.job_id = job_id;
  r.node_id = node_id;
  r.round = round;
  r.totals = {5.0, 10, 100, 1.0};
  r.iteration = 10 * (round + 1);
  return r;
}

/// Receives the round plan at `agent`; returns its round.
std::optional<std::uint32_t> started_epoch(caf::scoped_actor& agent) {
  std::optional<std::uint32_t> round;
  agent->receive([&](const round_plan& plan) { round = plan.round; }, caf::after(0s) >> [] {});
  return round;
}

/// `agent` answers the request to evaluate the epoch with `accuracy`; false if none came.
bool evaluated(caf::scoped_actor& agent, double accuracy) {
  bool asked = false;
  agent->receive(
    [&](evaluate_atom, std::uint64_t, std::uint32_t) {
      asked = true;
      return epoch_check{{accuracy, 0.5}, ""};
    },
    caf::after(0s) >> [] {});
  return asked;
}

} // namespace

BOOST_AUTO_TEST_CASE(refuses_a_node_that_speaks_another_protocol_version) {
  cluster_fixture env;
  caf::scoped_actor agent{env.sys};
  const auto reply = env.join(agent, "old", 1, protocol_version + 7);
  BOOST_TEST(!reply.accepted);
  BOOST_TEST(reply.reason.find("protocol version " + std::to_string(protocol_version + 7))
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_a_second_node_with_the_same_name) {
  cluster_fixture env;
  caf::scoped_actor first{env.sys};
  caf::scoped_actor second{env.sys};
  BOOST_TEST(env.join(first, "worker-a").accepted);
  const auto reply = env.join(second, "worker-a");
  BOOST_TEST(!reply.accepted);
  BOOST_TEST(reply.reason.find("'worker-a' has joined already") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lists_joined_nodes_with_distinct_ids) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  const auto id_a = env.join(a, "a", 2).node_id;
  const auto id_b = env.join(b, "b", 3).node_id;
  BOOST_TEST(id_a != id_b);
  const auto status = env.status();
  BOOST_REQUIRE(status);
  BOOST_REQUIRE_EQUAL(status->nodes.size(), 2u);
  BOOST_TEST(status->nodes[0].name == "a");
  BOOST_TEST(status->nodes[1].workers == 3u);
}

BOOST_AUTO_TEST_CASE(refuses_a_job_while_no_node_has_joined) {
  cluster_fixture env;
  const auto reply = env.submit();
  BOOST_TEST(!reply.accepted);
  BOOST_TEST(reply.reason == "no node has joined the scheduler");
}

BOOST_AUTO_TEST_CASE(gives_nodes_ranks_and_global_worker_ranks) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  const auto id_a = env.join(a, "a", 2).node_id;
  const auto id_b = env.join(b, "b", 1).node_id;
  BOOST_REQUIRE(env.submit().accepted);
  const auto first = env.assignment_for(a, std::nullopt);
  const auto second = env.assignment_for(b, std::nullopt);
  BOOST_TEST(first.rank == 0u);
  BOOST_TEST(first.workers == 2u);
  BOOST_TEST(first.first_worker == 0u);
  BOOST_TEST(second.rank == 1u);
  BOOST_TEST(second.first_worker == 2u);
  BOOST_TEST(second.total_workers == 3u);
  BOOST_TEST((first.origins == std::vector<std::uint64_t>{id_a, id_b}));
  BOOST_TEST((first.hub == second.hub));
  BOOST_TEST(static_cast<bool>(first.hub));
}

BOOST_AUTO_TEST_CASE(refuses_a_second_job_when_too_few_nodes_are_free_saying_how_many_are) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  BOOST_REQUIRE(env.submit().accepted);
  const auto reply = env.submit();
  BOOST_TEST(!reply.accepted);
  BOOST_TEST(reply.reason.find("needs 1 worker nodes, 1 joined, 0 of them free")
               != std::string::npos,
             reply.reason);
}

BOOST_AUTO_TEST_CASE(fails_the_job_when_a_node_does_not_prepare_in_time) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  const auto id = env.join(a, "slow").node_id;
  BOOST_REQUIRE(env.submit().accepted);
  env.assignment_for(a, std::nullopt);
  env.sched.advance_time(quiet_setup().timeouts.prepare_timeout);
  env.sched.run();
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(end->failure.find("node " + std::to_string(id) + " did not prepare the job")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(runs_every_epoch_and_sums_the_nodes_reports) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  const auto id_a = env.join(a, "a").node_id;
  const auto id_b = env.join(b, "b").node_id;
  const auto relay_a = env.sys.spawn(relay);
  const auto relay_b = env.sys.spawn(relay);
  const auto job = env.submit();
  BOOST_REQUIRE(job.accepted);
  env.assignment_for(a, ready_with(relay_a, id_a));
  env.assignment_for(b, ready_with(relay_b, id_b));
  env.sched.run();
  for (std::uint32_t epoch = 0; epoch < 2; ++epoch) {
    BOOST_TEST((started_epoch(a) == epoch));
    BOOST_TEST((started_epoch(b) == epoch));
    a->send(env.master, epoch_done(job.job_id, id_a, epoch));
    b->send(env.master, epoch_done(job.job_id, id_b, epoch));
    env.sched.run();
    BOOST_TEST(evaluated(a, 0.8 + 0.01 * epoch));  // the first node evaluates
    env.sched.run();
    const auto summary = env.client_gets<job_epoch>();
    BOOST_REQUIRE(summary);
    BOOST_TEST(summary->summary.epoch == epoch + 1);
    BOOST_TEST(summary->summary.train_loss == 0.5);  // 10 loss over 20 batches
    BOOST_TEST(summary->summary.test_accuracy == 0.8 + 0.01 * epoch);  // the first node's
  }
  for (auto* agent : {&a, &b}) {
    (*agent)->receive(
      [&](stop_atom, std::uint64_t job_id) {
        node_sharing_report counts;
        counts.job_id = job_id;
        counts.node_id = agent == &a ? id_a : id_b;
        counts.sent.updates = 10;
        counts.sent.bytes_sent = agent == &a ? 100 : 200;
        counts.sent.dense_bytes_equivalent = 10000;
        return counts;
      },
      caf::after(0s) >> [] { BOOST_FAIL("no stop request"); });
  }
  env.sched.run();
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->succeeded);
  BOOST_TEST(end->report.nodes == 2u);
  BOOST_TEST(end->report.epochs == 2u);
  BOOST_TEST(end->report.train_samples == 400u);
  BOOST_TEST(end->report.bytes_sent == 300u);
  BOOST_TEST(end->report.dense_bytes_equivalent == 20000u);
  BOOST_TEST(end->report.test_accuracy == 0.81);
  const auto status = env.status();  // still serving after its job and hub ended
  BOOST_REQUIRE(status);
  BOOST_TEST(status->jobs.at(0).state == "succeeded");
}

BOOST_AUTO_TEST_CASE(a_node_that_stops_answering_heartbeats_fails_its_job) {
  auto setup = quiet_setup();
  setup.timeouts.heartbeat_timeout = 3s;
  cluster_fixture env{setup};
  caf::scoped_actor a{env.sys};
  const auto id = env.join(a, "frozen").node_id;
  const auto relay_a = env.sys.spawn(relay);
  BOOST_REQUIRE(env.submit().accepted);
  env.assignment_for(a, ready_with(relay_a, id));
  env.sched.run();
  BOOST_TEST(!env.client_gets<job_finished>().has_value());  // pings unanswered, but not for long yet
  env.sched.advance_time(setup.timeouts.heartbeat_timeout);
  env.sched.run();
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(end->failure.find("node " + std::to_string(id) + " (frozen at 10.0.0.1) lost")
             != std::string::npos);
  const auto status = env.status();
  BOOST_REQUIRE(status);
  BOOST_TEST(status->nodes.empty());
  BOOST_REQUIRE_EQUAL(status->jobs.size(), 1u);
  BOOST_TEST(status->jobs[0].state == "failed");
}

BOOST_AUTO_TEST_CASE(a_crashed_node_fails_its_job_at_once) {
  cluster_fixture env;
  std::uint64_t id = 0;
  const auto relay_a = env.sys.spawn(relay);
  {
    caf::scoped_actor a{env.sys};
    id = env.join(a, "doomed").node_id;
    BOOST_REQUIRE(env.submit().accepted);
    env.assignment_for(a, ready_with(relay_a, id));
    env.sched.run();
  }  // the agent ends: the scheduler's monitor fires
  env.sched.run();
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(end->failure.find("node " + std::to_string(id) + " (doomed at 10.0.0.1) lost")
             != std::string::npos);
  const auto status = env.status();  // still serving after stopping the heartbeat
  BOOST_REQUIRE(status);
  BOOST_TEST(status->nodes.empty());
}

BOOST_AUTO_TEST_CASE(a_late_attach_gets_the_outcome_of_an_ended_job) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  env.join(a, "slow");
  const auto job = env.submit();
  env.assignment_for(a, std::nullopt);
  env.sched.advance_time(quiet_setup().timeouts.prepare_timeout);
  env.sched.run();
  BOOST_REQUIRE(env.client_gets<job_finished>());
  caf::scoped_actor late{env.sys};
  late->send(env.master, attach_atom_v, job.job_id);
  env.sched.run();
  std::optional<job_finished> end;
  std::size_t received = 0;
  late->receive_for(received, std::size_t{2})(  // the reply, then the outcome
    [&](const submit_reply& r) { BOOST_TEST(r.accepted); },
    [&](const job_finished& f) { end = f; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  late->send(env.master, attach_atom_v, job.job_id + 100);
  env.sched.run();
  std::optional<submit_reply> unknown;
  late->receive([&](const submit_reply& r) { unknown = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(unknown);
  BOOST_TEST(!unknown->accepted);
}

BOOST_AUTO_TEST_CASE(refuses_a_join_without_the_admission_token_naming_the_node) {
  auto setup = quiet_setup();
  setup.admission_token = "own-nodes-only";
  cluster_fixture env{setup};
  caf::scoped_actor stranger{env.sys};
  const auto reply = env.join(stranger, "stranger");
  BOOST_TEST(!reply.accepted);
  BOOST_TEST(reply.reason.find("node 'stranger' at 10.0.0.1 did not bring its admission token")
             != std::string::npos, reply.reason);
  caf::scoped_actor own{env.sys};
  own->send(env.master, join_request{protocol_version, "own", "10.0.0.2", 4, 1, "own-nodes-only"});
  env.sched.run();
  std::optional<join_reply> admitted;
  own->receive([&](const join_reply& r) { admitted = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(admitted);
  BOOST_TEST(admitted->accepted);
}

BOOST_AUTO_TEST_CASE(refuses_a_join_announcing_a_compute_rate_that_is_no_number) {
  cluster_fixture env;
  caf::scoped_actor odd{env.sys};
  join_request request{protocol_version, "odd", "10.0.0.3", 4, 1, {}};
  request.compute_rate = std::nan("");
  odd->send(env.master, request);
  env.sched.run();
  std::optional<join_reply> reply;
  odd->receive([&](const join_reply& r) { reply = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(reply);
  BOOST_TEST(!reply->accepted);
  BOOST_TEST(reply->reason.find("node odd announces a compute rate of nan") != std::string::npos,
             reply->reason);
}

BOOST_AUTO_TEST_CASE(answers_a_members_keepalive_as_still_a_member) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  const auto id = env.join(a, "a").node_id;
  a->send(env.master, keepalive_atom_v, id);
  env.sched.run();
  std::optional<keepalive_reply> reply;
  a->receive([&](const keepalive_reply& r) { reply = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(reply);
  BOOST_TEST(!reply->dropped);
}

BOOST_AUTO_TEST_CASE(tells_a_dropped_node_so_whenever_it_is_heard_from_again) {
  auto setup = quiet_setup();
  setup.timeouts.heartbeat_timeout = 3s;
  cluster_fixture env{setup};
  caf::scoped_actor frozen{env.sys};
  const auto id = env.join(frozen, "frozen").node_id;
  env.sched.advance_time(setup.timeouts.heartbeat_timeout);  // its pings go unanswered: dropped
  env.sched.run();
  const auto dropped_notice = [&] {
    std::optional<std::string> why;
    frozen->receive([&](dropped_atom, const std::string& reason) { why = reason; },
                    caf::after(0s) >> [] {});
    return why;
  };
  const auto first = dropped_notice();  // sent when it was dropped, read once it runs again
  BOOST_REQUIRE(first);
  BOOST_TEST(first->find("node " + std::to_string(id) + " (frozen at 10.0.0.1) lost")
             != std::string::npos, *first);
  frozen->send(env.master, keepalive_atom_v, id);
  env.sched.run();
  std::optional<keepalive_reply> reply;
  frozen->receive([&](const keepalive_reply& r) { reply = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(reply);
  BOOST_TEST(reply->dropped);
  BOOST_TEST(reply->reason == *first);
  frozen->send(env.master, node_progress{1, id, 0, 5, 50, 1.0, 0, {}, 0});
  env.sched.run();
  BOOST_TEST((dropped_notice() == first));
}

BOOST_AUTO_TEST_CASE(a_cancelled_job_ends_as_cancelled_and_its_nodes_stop_it) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  const auto id_a = env.join(a, "a").node_id;
  const auto relay_a = env.sys.spawn(relay);
  const auto job = env.submit();
  BOOST_REQUIRE(job.accepted);
  env.assignment_for(a, ready_with(relay_a, id_a));
  env.sched.run();
  BOOST_TEST((started_epoch(a) == 0u));
  caf::scoped_actor canceller{env.sys};
  canceller->send(env.master, cancel_atom_v, job.job_id);
  env.sched.run();
  std::optional<submit_reply> answer;
  canceller->receive([&](const submit_reply& r) { answer = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(answer);
  BOOST_TEST(answer->accepted);
  bool told_to_stop = false;
  a->receive([&](stop_atom, std::uint64_t job_id) { told_to_stop = job_id == job.job_id; },
             caf::after(0s) >> [] {});
  BOOST_TEST(told_to_stop);
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(end->cancelled);
  BOOST_TEST(!end->succeeded);
  const auto status = env.status();
  BOOST_REQUIRE(status);
  BOOST_REQUIRE_EQUAL(status->jobs.size(), 1u);
  BOOST_TEST(status->jobs[0].state == "cancelled");
}

BOOST_AUTO_TEST_CASE(refuses_to_cancel_an_ended_or_unknown_job) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  const auto job = env.submit();
  env.self->send(env.master, cancel_atom_v, job.job_id);
  env.sched.run();
  BOOST_REQUIRE(env.client_gets<submit_reply>()->accepted);
  const auto cancel = [&](std::uint64_t job_id) {
    env.self->send(env.master, cancel_atom_v, job_id);
    env.sched.run();
    auto reply = env.client_gets<submit_reply>();
    BOOST_REQUIRE(reply);
    BOOST_TEST(!reply->accepted);
    return reply->reason;
  };
  BOOST_TEST(cancel(job.job_id) == "job " + std::to_string(job.job_id)
                                     + " has already ended (cancelled)");
  BOOST_TEST(cancel(job.job_id + 5) == "the scheduler knows no job "
                                         + std::to_string(job.job_id + 5));
}

namespace {

/// `client` submits a job for `nodes` nodes; returns the scheduler's answer.
submit_reply submit_for(cluster_fixture& env, caf::scoped_actor& client, std::uint32_t nodes) {
  client->send(env.master, submit_atom_v, job_submission{"(name = \"j\")", "test.job", "", nodes});
  env.sched.run();
  std::optional<submit_reply> reply;
  client->receive([&](const submit_reply& r) { reply = r; }, caf::after(0s) >> [] {});
  BOOST_REQUIRE(reply);
  return *reply;
}

cluster_status status_now(cluster_fixture& env) {
  auto status = env.status();
  BOOST_REQUIRE(status);
  return *status;
}

} // namespace

BOOST_AUTO_TEST_CASE(runs_two_jobs_at_once_on_disjoint_nodes) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  const auto id_a = env.join(a, "a").node_id;
  const auto id_b = env.join(b, "b").node_id;
  caf::scoped_actor first_client{env.sys};
  caf::scoped_actor second_client{env.sys};
  const auto first = submit_for(env, first_client, 1);
  const auto second = submit_for(env, second_client, 1);
  BOOST_REQUIRE(first.accepted);
  BOOST_REQUIRE(second.accepted);
  BOOST_TEST(first.job_id != second.job_id);
  const auto on_a = env.assignment_for(a, std::nullopt);
  const auto on_b = env.assignment_for(b, std::nullopt);
  BOOST_TEST(on_a.job_id == first.job_id);
  BOOST_TEST(on_b.job_id == second.job_id);
  BOOST_TEST((on_a.origins == std::vector<std::uint64_t>{id_a}));
  BOOST_TEST((on_b.origins == std::vector<std::uint64_t>{id_b}));
  BOOST_TEST((on_a.hub != on_b.hub));
  const auto status = status_now(env);
  BOOST_REQUIRE_EQUAL(status.jobs.size(), 2u);
  BOOST_TEST(status.jobs[0].state == "preparing");
  BOOST_TEST(status.jobs[1].state == "preparing");
}

BOOST_AUTO_TEST_CASE(a_lost_node_fails_only_the_job_it_runs) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  const auto id_a = env.join(a, "a").node_id;
  const auto relay_a = env.sys.spawn(relay);
  const auto relay_b = env.sys.spawn(relay);
  caf::scoped_actor first_client{env.sys};
  caf::scoped_actor second_client{env.sys};
  std::uint64_t id_b = 0;
  submit_reply first;
  submit_reply second;
  {
    caf::scoped_actor b{env.sys};
    id_b = env.join(b, "b").node_id;
    first = submit_for(env, first_client, 1);
    second = submit_for(env, second_client, 1);
    env.assignment_for(a, ready_with(relay_a, id_a));
    env.assignment_for(b, ready_with(relay_b, id_b));
    env.sched.run();
  }  // b's agent ends: the scheduler's monitor fires
  env.sched.run();
  const auto lost = gets<job_finished>(second_client);
  BOOST_REQUIRE(lost);
  BOOST_TEST(lost->job_id == second.job_id);
  BOOST_TEST(lost->failure.find("node " + std::to_string(id_b) + " (b at 10.0.0.1) lost")
             != std::string::npos, lost->failure);
  BOOST_TEST(!gets<job_finished>(first_client).has_value());
  BOOST_TEST((started_epoch(a) == 0u));  // the first job trains on
  a->send(env.master, epoch_done(first.job_id, id_a, 0));
  env.sched.run();
  BOOST_TEST(evaluated(a, 0.7));
  env.sched.run();
  const auto epoch = gets<job_epoch>(first_client);
  BOOST_REQUIRE(epoch);
  BOOST_TEST(epoch->summary.epoch == 1u);
  const auto status = status_now(env);
  BOOST_REQUIRE_EQUAL(status.jobs.size(), 2u);
  BOOST_TEST(status.jobs[0].job_id == second.job_id);
  BOOST_TEST(status.jobs[0].state == "failed");
  BOOST_TEST(status.jobs[1].state == "training");
}

BOOST_AUTO_TEST_CASE(a_job_s_nodes_take_the_next_job_once_it_ended_stopping_the_old_one_first) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  const auto first = env.submit();
  env.assignment_for(a, std::nullopt);
  env.self->send(env.master, cancel_atom_v, first.job_id);
  env.sched.run();
  BOOST_REQUIRE(env.client_gets<submit_reply>()->accepted);
  const auto second = env.submit();
  BOOST_REQUIRE(second.accepted);
  std::vector<std::string> arrived;  // in mailbox order
  for (int i = 0; i < 2; ++i)
    a->receive([&](stop_atom, std::uint64_t job_id) { arrived.push_back(
                 "stop " + std::to_string(job_id)); },
               [&](const job_assignment& next) { arrived.push_back(
                 "assignment " + std::to_string(next.job_id)); },
               caf::after(0s) >> [] {});
  BOOST_TEST((arrived == std::vector<std::string>{"stop " + std::to_string(first.job_id),
                                                  "assignment " + std::to_string(second.job_id)}));
}

BOOST_AUTO_TEST_CASE(a_name_that_joins_again_after_it_was_lost_gets_the_next_incarnation) {
  cluster_fixture env;
  {
    caf::scoped_actor first{env.sys};
    env.join(first, "w");
    BOOST_TEST(status_now(env).nodes.at(0).incarnation == 1u);
  }  // lost
  env.sched.run();
  caf::scoped_actor second{env.sys};
  BOOST_TEST(env.join(second, "w").accepted);
  caf::scoped_actor other{env.sys};
  env.join(other, "v");
  const auto status = status_now(env);
  BOOST_REQUIRE_EQUAL(status.nodes.size(), 2u);
  BOOST_TEST(status.nodes[0].incarnation == 2u);
  BOOST_TEST(status.nodes[1].incarnation == 1u);
}

BOOST_AUTO_TEST_CASE(the_membership_epoch_grows_by_one_with_each_join_and_loss) {
  cluster_fixture env;
  BOOST_TEST(status_now(env).membership_epoch == 0u);
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  BOOST_TEST(status_now(env).membership_epoch == 1u);
  {
    caf::scoped_actor b{env.sys};
    env.join(b, "b");
    BOOST_TEST(status_now(env).membership_epoch == 2u);
  }  // lost
  env.sched.run();
  BOOST_TEST(status_now(env).membership_epoch == 3u);
  caf::scoped_actor refused{env.sys};
  env.join(refused, "a");  // a refused join changes nothing
  BOOST_TEST(status_now(env).membership_epoch == 3u);
}

BOOST_AUTO_TEST_CASE(a_job_master_that_dies_fails_its_job_and_frees_its_nodes) {
  cluster_fixture env;
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  const auto job = env.submit();
  BOOST_REQUIRE(job.accepted);
  caf::actor master_of_job;
  a->receive(
    [&](const job_assignment&) -> caf::result<node_ready> {
      master_of_job = caf::actor_cast<caf::actor>(a->current_sender());
      return a->make_response_promise<node_ready>();  // never answered: still preparing
    },
    caf::after(0s) >> [] {});
  BOOST_REQUIRE(master_of_job);
  env.self->send_exit(master_of_job, caf::exit_reason::user_shutdown);
  env.sched.run();
  const auto status = status_now(env);
  BOOST_REQUIRE_EQUAL(status.jobs.size(), 1u);
  BOOST_TEST(status.jobs[0].state == "failed");
  BOOST_TEST(status.jobs[0].failure.find("the job master stopped") != std::string::npos,
             status.jobs[0].failure);
  BOOST_TEST(env.submit().accepted);
}

namespace {

/// A stand-in for a trainer's encoded snapshot: one Cap'n Proto segment of 7 words (the keeper
/// and the chunks check framing and CRC, not content).
std::vector<capnp::word> snapshot_words() {
  std::vector<capnp::word> words(8);
  auto* bytes = reinterpret_cast<std::uint8_t*>(words.data());
  bytes[4] = 7;  // stream header: segment count - 1 = 0, then the segment's 7 words
  for (std::size_t i = 8; i < 64; ++i)
    bytes[i] = static_cast<std::uint8_t>(i * 3);
  return words;
}

/// `agent` answers the keeper's (snapshot_atom, job, receiver) with `words` as chunks.
bool sent_snapshot(caf::scoped_actor& agent, const std::vector<capnp::word>& words) {
  bool asked = false;
  agent->receive(
    [&](snapshot_atom, std::uint64_t, const caf::actor& receiver) {
      asked = true;
      auto chunks = strom::compute::chunk_snapshot({words.data(), words.size()}, 77, 16);
      BOOST_REQUIRE(chunks);
      for (auto& chunk : *chunks)
        agent->send(receiver, snapshot_chunk{chunk});
      return snapshot_sent{77, static_cast<std::uint32_t>(chunks->size()),
                           words.size() * sizeof(capnp::word)};
    },
    caf::after(0s) >> [] {});
  return asked;
}

} // namespace

namespace {

/// quiet_setup with a store in `dir`: a scheduler that can be started again from its record.
scheduler_setup stored_setup(const strom::test::scratch& dir) {
  auto store = strom::runtime::state_dir_store::open((dir.path() / "state").string());
  BOOST_REQUIRE(store);
  auto setup = quiet_setup();
  setup.store = *store;
  return setup;
}

/// Kills `env`'s scheduler (kill -9: nothing more is written) and starts one from its record;
/// `setup` keeps the record taken up.
void restart_from_record(cluster_fixture& env, scheduler_setup& setup) {
  env.self->send_exit(env.master, caf::exit_reason::kill);
  env.sched.run();
  const auto store = std::dynamic_pointer_cast<strom::runtime::state_dir_store>(setup.store);
  BOOST_REQUIRE(store);
  auto record = store->load();
  BOOST_REQUIRE(record && record->has_value());
  setup.restored = **record;
  env.master = env.sys.spawn(scheduler, setup);
  env.sched.run();
}

} // namespace

// #40: a client that submits while a restarted scheduler's nodes join again is held, not
// refused ("no node has joined"): its job starts once enough nodes are back; one that needs
// more nodes than come back in time is refused as before, after the wait.
BOOST_AUTO_TEST_CASE(a_restarted_scheduler_holds_a_submission_until_its_nodes_joined_again) {
  strom::test::scratch dir;
  auto setup = stored_setup(dir);
  cluster_fixture env{setup};
  caf::scoped_actor a{env.sys};
  env.join(a, "a");
  restart_from_record(env, setup);

  env.self->send(env.master, submit_atom_v, job_submission{"(name = \"j\")", "one.job", "", 1});
  env.self->send(env.master, submit_atom_v, job_submission{"(name = \"j\")", "two.job", "", 2});
  env.sched.run();
  BOOST_TEST(!env.client_gets<submit_reply>());  // both held
  caf::scoped_actor a_again{env.sys};
  env.join(a_again, "a");
  const auto placed = env.client_gets<submit_reply>();
  BOOST_REQUIRE(placed);
  BOOST_TEST(placed->accepted);
  BOOST_TEST(env.assignment_for(a_again, std::nullopt).job_id == placed->job_id);
  BOOST_TEST(!env.client_gets<submit_reply>());  // two.job still waits for a second node
  env.sched.advance_time(10s);
  env.sched.run();
  const auto refused = env.client_gets<submit_reply>();
  BOOST_REQUIRE(refused);
  BOOST_TEST(!refused->accepted);
  BOOST_TEST(refused->reason.find("two.job needs 2 worker nodes, 1 joined") != std::string::npos,
             refused->reason);
}

BOOST_AUTO_TEST_CASE(a_restarted_scheduler_resumes_its_job_from_the_checkpoint_once_its_nodes_are_back) {
  strom::test::scratch dir;
  auto setup = stored_setup(dir);
  cluster_fixture env{setup};
  const auto words = snapshot_words();
  caf::scoped_actor a{env.sys};
  caf::scoped_actor b{env.sys};
  const auto id_a = env.join(a, "a").node_id;
  const auto id_b = env.join(b, "b").node_id;
  const auto job_id = env.submit().job_id;
  env.assignment_for(a, ready_with(env.sys.spawn(relay), id_a));
  env.assignment_for(b, ready_with(env.sys.spawn(relay), id_b));
  env.sched.run();
  BOOST_TEST((started_epoch(a) == 0u));
  a->send(env.master, epoch_done(job_id, id_a, 0));
  b->send(env.master, epoch_done(job_id, id_b, 0));
  env.sched.run();
  BOOST_TEST(evaluated(a, 0.8));
  env.sched.run();
  BOOST_TEST(sent_snapshot(a, words));  // the checkpoint after epoch 1: the first node's
  env.sched.run();
  BOOST_TEST((started_epoch(a) == 1u));  // training goes on once it is saved
  restart_from_record(env, setup);
  const auto waiting = env.status();
  BOOST_REQUIRE(waiting);
  BOOST_REQUIRE_EQUAL(waiting->jobs.size(), 1u);
  BOOST_TEST(waiting->jobs[0].state == "resuming");
  BOOST_TEST(waiting->jobs[0].epoch == 1u);
  env.self->send(env.master, attach_atom_v, job_id);  // a client comes back before the nodes
  env.sched.run();
  BOOST_TEST(env.client_gets<submit_reply>()->accepted);

  caf::scoped_actor a_again{env.sys};
  caf::scoped_actor b_again{env.sys};
  const auto rejoined = env.join(a_again, "a");
  BOOST_TEST(rejoined.node_id == id_b + 1);  // ids never repeat across the restart
  BOOST_TEST(env.status()->jobs.at(0).state == "resuming");  // b is not back
  const auto id_b_again = env.join(b_again, "b").node_id;
  const auto status = env.status();
  BOOST_REQUIRE(status);
  BOOST_TEST(status->nodes.at(0).incarnation == 2u);
  const auto assigned = env.assignment_for(a_again, ready_with(env.sys.spawn(relay),
                                                               rejoined.node_id));
  BOOST_TEST(assigned.job_id == job_id);
  env.assignment_for(b_again, ready_with(env.sys.spawn(relay), id_b_again));
  env.sched.run();
  // Each node takes the checkpoint from the job's keeper before training.
  std::vector<caf::response_promise> restores;
  caf::actor keeper;
  for (auto* agent : {&a_again, &b_again})
    (*agent)->receive(
      [&](restore_atom, std::uint64_t restored_job, const caf::actor& source) {
        BOOST_TEST(restored_job == job_id);
        keeper = source;
        restores.push_back((*agent)->make_response_promise());
      },
      caf::after(0s) >> [] { BOOST_FAIL("no restore request"); });
  BOOST_TEST((started_epoch(a_again) == std::nullopt));
  a_again->send(keeper, snapshot_atom_v, job_id, caf::actor_cast<caf::actor>(a_again));
  env.sched.run();
  strom::compute::snapshot_assembler assembler{1 << 20};
  bool answered = false;
  while (!answered)
    a_again->receive([&](const snapshot_chunk& chunk) { BOOST_REQUIRE(assembler.add(chunk.value)); },
                     [&](const snapshot_sent&) { answered = true; },
                     caf::after(0s) >> [&] { BOOST_FAIL("the keeper sent nothing"); });
  BOOST_REQUIRE(assembler.complete());
  BOOST_TEST(std::equal(assembler.encoded().begin(), assembler.encoded().end(), words.begin(),
                        words.end(), [](const capnp::word& x, const capnp::word& y) {
                          return std::memcmp(&x, &y, sizeof x) == 0;
                        }));
  for (auto& promise : restores)
    promise.deliver(snapshot_sent{1, 1, 64});
  env.sched.run();
  std::optional<round_work> work;
  a_again->receive([&](const round_plan& plan) { work = plan.workers.at(0); },
                   caf::after(0s) >> [] {});
  BOOST_REQUIRE(work);
  BOOST_TEST(work->epoch == 1u);  // the second epoch: the first is in the checkpoint
}

namespace {

/// `agent` is asked to take job `job_id`'s checkpoint from its keeper and answers it did.
void took_the_checkpoint(caf::scoped_actor& agent, std::uint64_t job_id) {
  agent->receive(
    [&](restore_atom, std::uint64_t restored_job, const caf::actor&) {
      BOOST_TEST(restored_job == job_id);
      return snapshot_sent{1, 1, 64};
    },
    caf::after(0s) >> [] { BOOST_FAIL("no restore request"); });
}

} // namespace

// #40: a job whose scheduler keeps checkpoints does not fail when it loses a node it cannot
// go on without (here its only one): it starts again from its checkpoint once the node is
// back, with its clients, as after the scheduler's restart; --max-restarts bounds it.
BOOST_AUTO_TEST_CASE(a_job_that_cannot_go_on_after_a_loss_starts_again_from_its_checkpoint) {
  strom::test::scratch dir;
  auto setup = stored_setup(dir);
  cluster_fixture env{setup};
  std::uint64_t job_id = 0;
  {
    caf::scoped_actor a{env.sys};
    const auto id = env.join(a, "a").node_id;
    job_submission job{"(name = \"j\")", "test.job", "", 0};
    job.max_restarts = 1;
    env.self->send(env.master, submit_atom_v, job);
    env.sched.run();
    job_id = env.client_gets<submit_reply>().value().job_id;
    env.assignment_for(a, ready_with(env.sys.spawn(relay), id));
    env.sched.run();
    BOOST_TEST((started_epoch(a) == 0u));
    a->send(env.master, epoch_done(job_id, id, 0));
    env.sched.run();
    BOOST_TEST(evaluated(a, 0.8));
    env.sched.run();
    BOOST_TEST(sent_snapshot(a, snapshot_words()));  // the checkpoint after epoch 1
    env.sched.run();
    BOOST_TEST((started_epoch(a) == 1u));
  }  // its node ends: the job cannot go on without it
  env.sched.run();
  BOOST_TEST(!env.client_gets<job_finished>());
  const auto waiting = env.status();
  BOOST_REQUIRE(waiting);
  BOOST_REQUIRE_EQUAL(waiting->jobs.size(), 1u);
  BOOST_TEST(waiting->jobs[0].state == "resuming");
  BOOST_TEST(waiting->jobs[0].epoch == 1u);
  {
    caf::scoped_actor a_again{env.sys};
    const auto id = env.join(a_again, "a").node_id;
    BOOST_TEST(env.assignment_for(a_again, ready_with(env.sys.spawn(relay), id)).job_id
               == job_id);
    env.sched.run();
    took_the_checkpoint(a_again, job_id);
    env.sched.run();
    std::optional<round_work> work;
    a_again->receive([&](const round_plan& plan) { work = plan.workers.at(0); },
                     caf::after(0s) >> [] {});
    BOOST_REQUIRE(work);
    BOOST_TEST(work->epoch == 1u);  // the epoch after the checkpoint
  }  // lost again: its one restart is spent
  env.sched.run();
  const auto end = env.client_gets<job_finished>();
  BOOST_REQUIRE(end);
  BOOST_TEST(!end->succeeded);
  BOOST_TEST(end->failure.find("(a at 10.0.0.1) lost") != std::string::npos, end->failure);
  BOOST_TEST(end->report.job_restarts == 1u);
  BOOST_TEST(end->report.nodes_lost == 2u);
}
