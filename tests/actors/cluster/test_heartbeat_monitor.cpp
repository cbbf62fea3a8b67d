#define BOOST_TEST_MODULE actors_heartbeat_monitor
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/cluster/heartbeat_monitor.hpp"
#include "strom/actors/messages.hpp"
#include "support/deterministic_system.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t watched_node = 3;
constexpr caf::timespan interval = 500ms;
constexpr caf::timespan timeout = 2000ms;

/// A node_agent stand-in: answers the first `answers` pings, then holds every later ping
/// unanswered (a dropped promise never answers in CAF 0.17, like a frozen node). Tells
/// `observer` (ping_atom, urgent) for every ping it gets.
struct fake_agent_state {
  std::uint32_t answers = 0;
  caf::actor observer;
};

caf::behavior fake_agent(caf::stateful_actor<fake_agent_state>* self, std::uint32_t answers,
                         caf::actor observer) {
  self->state.answers = answers;
  self->state.observer = std::move(observer);
  return {
    [self](ping_atom) -> caf::result<pong_atom> {
      const bool urgent = self->current_mailbox_element()->mid.is_urgent_message();
      self->send(self->state.observer, ping_atom_v, urgent);
      if (self->state.answers == 0)
        return self->make_response_promise<pong_atom>();
      --self->state.answers;
      return pong_atom_v;
    },
  };
}

/// A node_agent stand-in that answers every ping with an error.
caf::behavior failing_agent() {
  return {
    [](ping_atom) -> caf::result<pong_atom> { return caf::make_error(caf::sec::runtime_error); },
  };
}

/// An actor system on CAF's deterministic scheduler; a blocking actor plays the scheduler
/// (it gets the reports) and the observer of the fake agent's pings.
struct heartbeat_fixture : strom::testing::deterministic_system {
  std::vector<caf::actor> spawned;  ///< ended on teardown, also when a check failed

  ~heartbeat_fixture() {
    for (const auto& actor : spawned)
      self->send_exit(actor, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Spawns a fake agent answering `answers` pings and a monitor watching it; returns the
  /// agent.
  caf::actor spawn_watched(std::uint32_t answers) {
    auto agent = sys.spawn(fake_agent, answers, caf::actor_cast<caf::actor>(self));
    spawned.push_back(agent);
    spawn_monitor(agent);
    return agent;
  }

  /// Spawns a monitor watching `agent`, reporting to the blocking actor.
  void spawn_monitor(const caf::actor& agent) {
    heartbeat_setup setup;
    setup.node_id = watched_node;
    setup.node_agent = caf::actor_cast<pingable_actor>(agent);
    setup.scheduler = caf::actor_cast<hung_reporter_actor>(self);
    setup.interval = interval;
    setup.timeout = timeout;
    auto monitor = sys.spawn(heartbeat_monitor, setup);
    spawned.push_back(monitor);
    self->monitor(monitor);
    sched.run();
  }

  /// Moves virtual time forward by `d` in 1 ms steps, running everything that becomes due
  /// at each step (one big step would fire a periodic tick only once).
  void advance(caf::timespan d) {
    for (caf::timespan done{0}; done < d; done += 1ms) {
      sched.advance_time(1ms);
      sched.run();
    }
  }

  /// Takes every message waiting for the blocking actor: pings seen, urgent pings seen,
  /// reports (with the last reason) and whether the monitor went down.
  struct inbox {
    std::uint32_t pings = 0;
    std::uint32_t urgent_pings = 0;
    std::uint32_t reports = 0;
    std::uint64_t reported_node = 0;
    std::string reason;
    bool monitor_down = false;
  };
  inbox drain() {
    inbox out;
    bool more = true;
    while (more)
      self->receive(
        [&](ping_atom, bool urgent) {
          ++out.pings;
          out.urgent_pings += urgent ? 1 : 0;
        },
        [&](node_hung_atom, std::uint64_t node, const std::string& reason) {
          ++out.reports;
          out.reported_node = node;
          out.reason = reason;
        },
        [&](const caf::down_msg&) { out.monitor_down = true; },
        caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return out;
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(answered_pings_never_report) {
  heartbeat_fixture env;
  env.spawn_watched(1000);
  for (int i = 0; i < 20; ++i)
    env.advance(interval);
  const auto seen = env.drain();
  BOOST_TEST(seen.pings == 21u);  // one at start, one per interval
  BOOST_TEST(seen.reports == 0u);
  BOOST_TEST(!seen.monitor_down);
}

BOOST_AUTO_TEST_CASE(silent_agent_is_not_reported_before_the_timeout) {
  heartbeat_fixture env;
  env.spawn_watched(0);
  env.advance(timeout - 1ms);
  const auto seen = env.drain();
  BOOST_TEST(seen.reports == 0u);
  BOOST_TEST(!seen.monitor_down);
}

BOOST_AUTO_TEST_CASE(agent_that_stops_answering_is_reported_after_the_timeout) {
  heartbeat_fixture env;
  env.spawn_watched(3);  // answers the pings at 0, 0.5 s and 1 s
  env.advance(1500ms);                           // the ping at 1.5 s goes unanswered
  BOOST_TEST(env.drain().reports == 0u);
  env.advance(timeout - 1ms);
  BOOST_TEST(env.drain().reports == 0u);
  env.advance(1ms);
  BOOST_TEST(env.drain().reports == 1u);
}

BOOST_AUTO_TEST_CASE(hung_node_is_reported_exactly_once) {
  heartbeat_fixture env;
  env.spawn_watched(0);
  // Every ping times out in turn; only the first may be reported.
  for (int i = 0; i < 20; ++i)
    env.advance(interval);
  BOOST_TEST(env.drain().reports == 1u);
}

BOOST_AUTO_TEST_CASE(error_answer_is_reported_naming_the_node) {
  heartbeat_fixture env;
  auto agent = env.sys.spawn(failing_agent);
  env.spawned.push_back(agent);
  env.spawn_monitor(agent);
  const auto seen = env.drain();
  BOOST_REQUIRE(seen.reports == 1u);
  BOOST_TEST(seen.reported_node == watched_node);
  BOOST_TEST(seen.reason.rfind("node 3: heartbeat answered with an error within 2000 ms: ", 0) == 0u,
             seen.reason);
}

BOOST_AUTO_TEST_CASE(report_names_the_node_and_the_timeout) {
  heartbeat_fixture env;
  env.spawn_watched(0);
  env.advance(timeout);
  const auto seen = env.drain();
  BOOST_REQUIRE(seen.reports == 1u);
  BOOST_TEST(seen.reported_node == watched_node);
  BOOST_TEST(seen.reason == "node 3: no heartbeat answer within 2000 ms");
}

BOOST_AUTO_TEST_CASE(monitor_quits_after_reporting) {
  heartbeat_fixture env;
  env.spawn_watched(0);
  env.advance(timeout);
  auto seen = env.drain();
  BOOST_TEST(seen.reports == 1u);
  BOOST_TEST(seen.monitor_down);
  // No pings after the report.
  for (int i = 0; i < 10; ++i)
    env.advance(interval);
  BOOST_TEST(env.drain().pings == 0u);
}

BOOST_AUTO_TEST_CASE(monitor_quits_quietly_when_the_agent_goes_down) {
  heartbeat_fixture env;
  auto agent = env.spawn_watched(0);
  env.self->send_exit(agent, caf::exit_reason::kill);
  env.sched.run();
  for (int i = 0; i < 10; ++i)
    env.advance(interval);
  const auto seen = env.drain();
  BOOST_TEST(seen.monitor_down);
  BOOST_TEST(seen.reports == 0u);
}

BOOST_AUTO_TEST_CASE(pings_use_high_priority) {
  heartbeat_fixture env;
  env.spawn_watched(1000);
  for (int i = 0; i < 4; ++i)
    env.advance(interval);
  const auto seen = env.drain();
  BOOST_TEST(seen.pings == 5u);
  BOOST_TEST(seen.urgent_pings == seen.pings);
}
