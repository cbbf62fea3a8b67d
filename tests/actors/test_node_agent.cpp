#define BOOST_TEST_MODULE actors_node_agent
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/error_text.hpp"
#include "strom/actors/node_agent.hpp"
#include "support/deterministic_system.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan join_timeout = 5s;

/// A node agent whose scheduler is `scheduler` (a scoped actor playing it).
caf::actor spawn_agent(strom::testing::deterministic_system& env, const caf::actor& scheduler) {
  node_agent_setup setup;
  setup.scheduler = scheduler;
  setup.identity = {protocol_version, "n1", "127.0.0.1", 2, 2};
  setup.join_timeout = join_timeout;
  setup.prepare = [](const job_assignment&) -> strom::result<node_job> {
    return strom::error{"tests never prepare a job"};
  };
  auto agent = env.sys.spawn(node_agent, setup);
  env.self->monitor(agent);
  return agent;
}

/// The scheduler stand-in answers the agent's join with `reply`.
void answer_join(caf::scoped_actor& scheduler, join_reply reply) {
  bool asked = false;
  scheduler->receive(
    [&](const join_request& request) {
      asked = true;
      BOOST_TEST(request.version == protocol_version);
      BOOST_TEST(request.name == "n1");
      return reply;
    },
    caf::after(0s) >> [] {});
  BOOST_REQUIRE(asked);
}

/// Ends a still running agent: the deterministic system only shuts down once it is gone.
void stop(strom::testing::deterministic_system& env, const caf::actor& agent) {
  env.self->send_exit(agent, caf::exit_reason::user_shutdown);
  env.sched.run();
}

/// Why the agent stopped, or nothing if it still runs.
std::optional<std::string> exit_reason(strom::testing::deterministic_system& env) {
  std::optional<std::string> why;
  env.self->receive(
    [&](const caf::down_msg& down) { why = error_text(env.sys, down.reason); },
    caf::after(0s) >> [] {});
  return why;
}

} // namespace

BOOST_AUTO_TEST_CASE(stops_naming_the_reason_when_the_join_is_refused) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  spawn_agent(env, caf::actor_cast<caf::actor>(scheduler));
  env.sched.run();
  answer_join(scheduler, {false, 0, "a node named 'n1' has joined already"});
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(*why == "the scheduler refused the join: a node named 'n1' has joined already");
}

BOOST_AUTO_TEST_CASE(stops_when_the_scheduler_does_not_answer_the_join_in_time) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  spawn_agent(env, caf::actor_cast<caf::actor>(scheduler));
  env.sched.run();
  BOOST_TEST(!exit_reason(env).has_value());
  env.sched.advance_time(join_timeout);
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(why->find("no answer from the scheduler to the join") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(answers_heartbeat_pings) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  auto agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler));
  env.sched.run();
  answer_join(scheduler, {true, 4, {}});
  env.sched.run();
  scheduler->send(agent, ping_atom_v);
  env.sched.run();
  bool pong = false;
  scheduler->receive([&](pong_atom) { pong = true; }, caf::after(0s) >> [] {});
  BOOST_TEST(pong);
  stop(env, agent);
}

BOOST_AUTO_TEST_CASE(refuses_an_assignment_for_more_workers_than_it_offers) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  auto agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler));
  env.sched.run();
  answer_join(scheduler, {true, 4, {}});
  env.sched.run();
  job_assignment greedy;
  greedy.job_id = 1;
  greedy.workers = 1'000'000;
  greedy.total_workers = 1'000'000;
  scheduler->send(agent, greedy);
  env.sched.run();
  std::optional<std::string> refusal;
  scheduler->receive([&](caf::error& err) { refusal = error_text(env.sys, err); },
                     [&](const node_ready&) { BOOST_FAIL("the agent accepted"); },
                     caf::after(0s) >> [] {});
  BOOST_REQUIRE(refusal);
  BOOST_TEST(*refusal == "node 4 offers 2 workers, the job asks for 1000000");
  BOOST_TEST(!exit_reason(env).has_value());  // still running
  stop(env, agent);
}

BOOST_AUTO_TEST_CASE(stops_when_the_scheduler_goes_down) {
  strom::testing::deterministic_system env;
  {
    caf::scoped_actor scheduler{env.sys};
    spawn_agent(env, caf::actor_cast<caf::actor>(scheduler));
    env.sched.run();
    answer_join(scheduler, {true, 4, {}});
    env.sched.run();
  }
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(why->find("lost the scheduler") != std::string::npos);
}
