#define BOOST_TEST_MODULE actors_node_agent
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/error_text.hpp"
#include "strom/actors/cluster/node_agent.hpp"
#include "strom/actors/sharing/relay.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/snapshots/snapshot_chunks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "support/deterministic_system.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan join_timeout = 5s;
constexpr caf::timespan keepalive_interval = 1s;
constexpr caf::timespan reconnect_timeout = 5s;

/// Bound of each wait in real time (tests on a threaded system).
constexpr caf::timespan real_wait = 10s;

/// A threaded actor system: a node agent prepares its jobs on a thread of its own, and CAF's
/// deterministic coordinator cannot take messages from such threads.
struct threaded_system {
  static caf::actor_system_config& configured(caf::actor_system_config& cfg) {
    register_message_types(cfg);
    return cfg;
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  caf::scoped_actor self{sys};
};

/// A node agent whose scheduler is `scheduler` (a scoped actor playing it); `prepare` builds
/// its jobs (by default it refuses), `connect` its mesh links (by default it has none).
template <class Env>
caf::actor spawn_agent(Env& env, const caf::actor& scheduler, node_job_factory prepare = nullptr,
                       relay_connector connect = nullptr) {
  node_agent_setup setup;
  setup.scheduler = caf::actor_cast<agent_scheduler_actor>(scheduler);
  setup.identity = {protocol_version, "n1", "127.0.0.1", 2, 2, {}};
  setup.timeouts.join_timeout = join_timeout;
  setup.timeouts.keepalive_interval = keepalive_interval;
  setup.timeouts.reconnect_timeout = reconnect_timeout;
  setup.prepare = prepare ? std::move(prepare)
                          : [](const job_assignment&, const replicas_built&)
                              -> strom::result<node_job> {
    return strom::error{"tests never prepare a job"};
  };
  setup.connect_relay = std::move(connect);
  auto agent = env.sys.spawn(node_agent, setup);
  env.self->monitor(agent);
  return agent;
}

/// The scheduler stand-in answers the agent's join with `reply`, waiting at most `wait`.
void answer_join(caf::scoped_actor& scheduler, join_reply reply, caf::timespan wait = 0s) {
  bool asked = false;
  scheduler->receive(
    [&](const join_request& request) {
      asked = true;
      BOOST_TEST(request.version == protocol_version);
      BOOST_TEST(request.name == "n1");
      return reply;
    },
    caf::after(wait) >> [] {});
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

/// A joined agent (node 4) with `scheduler` playing its scheduler.
caf::actor joined_agent(strom::testing::deterministic_system& env, caf::scoped_actor& scheduler,
                        node_job_factory prepare = nullptr) {
  auto agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler), std::move(prepare));
  env.sched.run();
  answer_join(scheduler, {true, 4, {}});
  env.sched.run();
  return agent;
}

/// The keepalives that reached the scheduler stand-in, each answered with `reply` (none when
/// empty).
std::size_t keepalives(caf::scoped_actor& scheduler, std::optional<keepalive_reply> reply) {
  std::size_t count = 0;
  bool more = true;
  while (more)
    scheduler->receive(
      [&](keepalive_atom, std::uint64_t node_id) -> caf::result<keepalive_reply> {
        BOOST_TEST(node_id == 4u);
        ++count;
        if (reply)
          return *reply;
        return scheduler->make_response_promise<keepalive_reply>();  // never delivered
      },
      caf::after(0s) >> [&] { more = false; });
  return count;
}

/// A one-job node over a two-class, four-feature set of 8 samples: one trainer, one epoch.
strom::result<node_job> tiny_job(const job_assignment&, const replicas_built& built = {}) {
  const auto spec = strom::runtime::parse_job_text(
    "(network = (input = (width = 4), layers = [(output = (units = 2))]), "
    "training = (batchSize = 1, updater = (learningRate = 0.1, sgd = void)))",
    "tiny.job", ".");
  if (!spec)
    return spec.err();
  auto replica = strom::compute::make_replica(spec->reader(), 0);
  if (!replica)
    return replica.err();
  if (built)
    built(**replica);
  auto data = std::make_shared<strom::compute::dataset>();
  data->sample_shape = strom::compute::shape{1, 1, 4};
  data->classes = 2;
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t f = 0; f < 4; ++f)
      data->features.push_back(static_cast<float>((i + f) % 3));
    data->labels.push_back(static_cast<std::int32_t>(i % 2));
  }
  node_job job;
  job.node.replicas.push_back(std::move(*replica));
  job.node.train = data;
  job.node.batch_size = 1;
  job.job_name = "tiny";
  job.epochs = 1;
  job.batches_per_epoch = 8;
  job.samples_per_epoch = 8;
  return job;
}

/// The answer to the assignment `scheduler` sent: node_ready, or the error's text.
std::optional<node_ready> await_ready(threaded_system& env, caf::scoped_actor& scheduler) {
  std::optional<node_ready> ready;
  scheduler->receive([&](const node_ready& r) { ready = r; },
                     [&](caf::error& err) { BOOST_FAIL(error_text(env.sys, err)); },
                     caf::after(real_wait) >> [] {});
  return ready;
}

/// An assignment of job `job_id` for one worker.
job_assignment one_worker_job(std::uint64_t job_id, const caf::actor& hub) {
  job_assignment assignment;
  assignment.job_id = job_id;
  assignment.workers = 1;
  assignment.total_workers = 1;
  assignment.origins = {4};
  assignment.hub = hub;
  return assignment;
}

/// The mesh links a node agent made: the endpoints it connected to, in order; each connection
/// waits until the test lets connections go on.
struct mesh_links {
  std::mutex lock;
  std::vector<std::string> endpoints;
  std::promise<void> go_on;
  std::shared_future<void> going_on = go_on.get_future().share();

  std::vector<std::string> made() {
    std::lock_guard<std::mutex> held{lock};
    return endpoints;
  }
};

/// Connects every endpoint to `parent` (a relay), recording it in `links`.
relay_connector connecting_to(const caf::actor& parent, std::shared_ptr<mesh_links> links) {
  return [parent, links](const std::string& endpoint) -> strom::result<relay_link> {
    {
      std::lock_guard<std::mutex> held{links->lock};
      links->endpoints.push_back(endpoint);
    }
    links->going_on.wait();
    return relay_link{parent, nullptr};
  };
}

/// Version `version` of job 1's topology: node 4 hangs under the relay at `endpoint`.
topology_update update_to(std::uint64_t version, const std::string& endpoint) {
  return {1, version, 1, endpoint, false};
}

/// What a topology_update request got: "wired" or the error's text.
template <class Request>
std::string answer_of(threaded_system& env, Request&& request) {
  std::string answer = "no answer";
  request.receive([&](wired_atom) { answer = "wired"; },
                  [&](caf::error& err) { answer = error_text(env.sys, err); });
  return answer;
}

/// A joined agent (node 4) running job 1 whose mesh links all go to one parent relay,
/// connecting only once the test let them go on.
struct meshed_node {
  meshed_node() {
    agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler), tiny_job,
                        connecting_to(parent, links));
    answer_join(scheduler, {true, 4, {}}, real_wait);
    scheduler->send(agent, one_worker_job(1, caf::actor_cast<caf::actor>(hub)));
    BOOST_REQUIRE(await_ready(env, scheduler));
  }

  ~meshed_node() {
    let_links_go();  // a connection still waiting would keep the system from shutting down
    for (const auto& a : {agent, parent})
      env.self->send_exit(a, caf::exit_reason::user_shutdown);
  }

  void let_links_go() {
    if (!links_going) {
      links_going = true;
      links->go_on.set_value();
    }
  }

  threaded_system env;
  caf::scoped_actor scheduler{env.sys};
  caf::scoped_actor hub{env.sys};
  caf::actor parent = env.sys.spawn(relay);
  std::shared_ptr<mesh_links> links = std::make_shared<mesh_links>();
  bool links_going = false;
  caf::actor agent;
};

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

BOOST_AUTO_TEST_CASE(leaves_naming_the_reason_when_the_scheduler_says_it_dropped_the_node) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  const auto agent = joined_agent(env, scheduler);
  scheduler->send(agent, dropped_atom_v, std::string{"node 4 lost: no heartbeat answer"});
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(*why == "dropped by the scheduler: node 4 lost: no heartbeat answer");
}

BOOST_AUTO_TEST_CASE(ignores_a_dropped_notice_from_anyone_but_its_scheduler) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  const auto agent = joined_agent(env, scheduler);
  caf::scoped_actor stranger{env.sys};
  stranger->send(agent, dropped_atom_v, std::string{"forged"});
  env.sched.run();
  BOOST_TEST(!exit_reason(env).has_value());
  stop(env, agent);
}

BOOST_AUTO_TEST_CASE(leaves_when_its_keepalive_is_answered_as_dropped) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  joined_agent(env, scheduler);
  BOOST_TEST(keepalives(scheduler, std::nullopt) == 0u);  // the first one waits an interval
  env.sched.advance_time(keepalive_interval);
  env.sched.run();
  BOOST_TEST(keepalives(scheduler, keepalive_reply{true, "node 4 lost: hung"}) == 1u);
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(*why == "dropped by the scheduler: node 4 lost: hung");
}

BOOST_AUTO_TEST_CASE(stays_while_its_keepalives_are_answered) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  const auto agent = joined_agent(env, scheduler);
  for (int second = 0; second < 3 * reconnect_timeout / keepalive_interval; ++second) {
    env.sched.advance_time(keepalive_interval);
    env.sched.run();
    BOOST_TEST(keepalives(scheduler, keepalive_reply{}) == 1u);
    env.sched.run();
  }
  BOOST_TEST(!exit_reason(env).has_value());
  stop(env, agent);
}

BOOST_AUTO_TEST_CASE(gives_up_when_no_keepalive_is_answered_for_the_reconnect_timeout) {
  strom::testing::deterministic_system env;
  caf::scoped_actor scheduler{env.sys};
  joined_agent(env, scheduler);
  // Silent from the join on: the first keepalive (sent after one interval) times out one
  // reconnect timeout later.
  const int seconds_alive = (keepalive_interval + reconnect_timeout) / keepalive_interval;
  for (int second = 1; second < seconds_alive; ++second) {
    env.sched.advance_time(keepalive_interval);
    env.sched.run();
    BOOST_TEST(!exit_reason(env).has_value(), "gave up after " << second << " s");
  }
  BOOST_TEST(keepalives(scheduler, std::nullopt) == static_cast<std::size_t>(seconds_alive - 1));
  env.sched.advance_time(keepalive_interval);
  env.sched.run();
  const auto why = exit_reason(env);
  BOOST_REQUIRE(why);
  BOOST_TEST(why->find("gave up on the scheduler after 6 s without an answer "
                       "(--reconnect-timeout 5 s)") != std::string::npos, *why);
}

namespace {

/// A joined agent (node 4) running job 1 of one worker, its relay watched by the test.
struct agent_running_a_job {
  agent_running_a_job() {
    answer_join(scheduler, {true, 4, {}}, real_wait);
    scheduler->send(agent, one_worker_job(1, caf::actor_cast<caf::actor>(hub)));
    ready = await_ready(env, scheduler);
    BOOST_REQUIRE(ready);
    env.self->monitor(ready->relay);
  }

  /// Awaits the down messages of the agent and the relay: which came.
  std::pair<bool, bool> agent_and_relay_down() {
    bool agent_down = false;
    bool relay_down = false;
    for (int i = 0; i < 2; ++i)
      env.self->receive(
        [&](const caf::down_msg& down) {
          agent_down |= down.source == agent.address();
          relay_down |= down.source == ready->relay.address();
        },
        caf::after(real_wait) >> [] {});
    return {agent_down, relay_down};
  }

  threaded_system env;
  caf::scoped_actor scheduler{env.sys};
  caf::actor agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler), tiny_job);
  caf::scoped_actor hub{env.sys};
  std::optional<node_ready> ready;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_dropped_node_stops_its_jobs_actors) {
  agent_running_a_job node;
  node.scheduler->send(node.agent, dropped_atom_v, std::string{"node 4 lost: hung"});
  const auto [agent_down, relay_down] = node.agent_and_relay_down();
  BOOST_TEST(agent_down);
  BOOST_TEST(relay_down);
}

BOOST_AUTO_TEST_CASE(a_relay_still_reporting_after_a_stop_ends_when_the_agent_ends_first) {
  // A stop asks the job's relay for its counts and ends it once it answered; an agent that
  // ends first (Ctrl-C: a cancel, then the shutdown) must end it too, or its actor system
  // waits for the relay forever.
  agent_running_a_job node;
  node.scheduler->send(node.agent, stop_atom_v, std::uint64_t{1});
  node.scheduler->send_exit(node.agent, caf::exit_reason::user_shutdown);
  BOOST_TEST(node.agent_and_relay_down().second);
}

BOOST_AUTO_TEST_CASE(a_job_stopped_while_it_is_prepared_never_starts) {
  threaded_system env;
  caf::scoped_actor scheduler{env.sys};
  auto release = std::make_shared<std::promise<void>>();
  auto released = release->get_future().share();
  const auto agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler),
                                 [released](const job_assignment& a,
                                            const replicas_built& built) {
                                   if (a.job_id == 1)
                                     released.wait();  // still loading when the stop arrives
                                   return tiny_job(a, built);
                                 });
  answer_join(scheduler, {true, 4, {}}, real_wait);
  caf::scoped_actor hub{env.sys};
  scheduler->send(agent, one_worker_job(1, caf::actor_cast<caf::actor>(hub)));
  scheduler->send(agent, stop_atom_v, std::uint64_t{1});
  bool stopped = false;
  std::optional<std::string> refused;
  for (int i = 0; i < 2; ++i)
    scheduler->receive([&](const node_sharing_report& r) { stopped = r.job_id == 1; },
                       [&](caf::error& err) { refused = error_text(env.sys, err); },
                       caf::after(real_wait) >> [] {});
  BOOST_TEST(stopped);
  BOOST_REQUIRE(refused);
  BOOST_TEST(*refused == "job 1 was stopped");
  release->set_value();
  // Job 1 finishes loading after its stop and must not start: a started job 1 would make the
  // node refuse job 2 as busy, or answer for job 1.
  scheduler->send(agent, one_worker_job(2, caf::actor_cast<caf::actor>(hub)));
  const auto next = await_ready(env, scheduler);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->job_id == 2u);
  env.self->send_exit(agent, caf::exit_reason::user_shutdown);
}

// #40: a joiner asked for a snapshot while it still loads its data asks the source at once
// (its replicas are built, so it knows the snapshot's bound), and its trainer takes the snapshot
// once it runs; the restore is answered after node_ready.
BOOST_AUTO_TEST_CASE(a_restore_asked_while_the_data_loads_is_fetched_beside_it) {
  threaded_system env;
  caf::scoped_actor scheduler{env.sys};
  caf::scoped_actor source{env.sys};  // plays the node whose snapshot is taken
  auto release = std::make_shared<std::promise<void>>();
  auto released = release->get_future().share();
  auto trained = std::make_shared<std::shared_ptr<strom::compute::replica>>();
  const auto agent = spawn_agent(env, caf::actor_cast<caf::actor>(scheduler),
                                 [released, trained](const job_assignment& a,
                                                     const replicas_built& built) {
                                   auto job = tiny_job(a, built);
                                   released.wait();  // the data still loads
                                   if (job)
                                     *trained = job->node.replicas.front();
                                   return job;
                                 });
  answer_join(scheduler, {true, 4, {}}, real_wait);
  caf::scoped_actor hub{env.sys};
  scheduler->send(agent, one_worker_job(1, caf::actor_cast<caf::actor>(hub)));
  auto restore = scheduler->request(agent, real_wait, restore_atom_v, std::uint64_t{1},
                                    caf::actor_cast<caf::actor>(source));

  // The source's model: the tiny network with every parameter 0.25.
  auto model = tiny_job({});
  BOOST_REQUIRE(model);
  auto& sent_model = *model->node.replicas.front();
  for (auto& p : sent_model.net().parameters())
    p = 0.25f;
  const auto encoded =
    strom::compute::encode_snapshot(strom::compute::take_snapshot(sent_model, nullptr, {}));
  auto chunks = strom::compute::chunk_snapshot({encoded.begin(), encoded.size()}, 7, 64);
  BOOST_REQUIRE(chunks && chunks->size() > 1);
  bool asked = false;
  source->receive(
    [&](snapshot_atom, std::uint64_t job_id, const caf::actor& receiver) {
      asked = job_id == 1;
      for (auto& chunk : *chunks)
        source->send(receiver, snapshot_chunk{chunk});
      return snapshot_sent{7, static_cast<std::uint32_t>(chunks->size()),
                           encoded.size() * sizeof(capnp::word)};
    },
    caf::after(real_wait) >> [] {});
  BOOST_TEST(asked);  // before the data was loaded
  release->set_value();
  BOOST_REQUIRE(await_ready(env, scheduler));
  bool restored = false;
  restore.receive([&](const snapshot_sent& sent) { restored = sent.snapshot_id == 7; },
                  [&](caf::error& err) { BOOST_FAIL(error_text(env.sys, err)); });
  BOOST_TEST(restored);
  BOOST_REQUIRE(*trained);
  for (const auto p : (*trained)->net().parameters())
    BOOST_TEST(p == 0.25f);
  env.self->send_exit(agent, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(updates_that_come_while_it_wires_are_answered_and_only_the_newest_wired) {
  meshed_node node;
  // Two remaps in a row: versions 2 and 3 come while version 1's link is still connecting.
  auto first = node.scheduler->request(node.agent, real_wait, update_to(1, "p1:1"));
  auto second = node.scheduler->request(node.agent, real_wait, update_to(2, "p2:1"));
  auto third = node.scheduler->request(node.agent, real_wait, update_to(3, "p3:1"));
  node.let_links_go();
  BOOST_TEST(answer_of(node.env, first) == "wired");
  BOOST_TEST(answer_of(node.env, second) == "wired");  // superseded by version 3
  BOOST_TEST(answer_of(node.env, third) == "wired");
  BOOST_TEST((node.links->made() == std::vector<std::string>{"p1:1", "p3:1"}));
}

BOOST_AUTO_TEST_CASE(an_update_older_than_the_one_wired_is_answered_but_never_wired) {
  meshed_node node;
  node.let_links_go();
  const auto wire = [&](const topology_update& update) {
    return answer_of(node.env, node.scheduler->request(node.agent, real_wait, update));
  };
  BOOST_TEST(wire(update_to(3, "p3:1")) == "wired");
  BOOST_TEST(wire(update_to(2, "p2:1")) == "wired");
  BOOST_TEST((node.links->made() == std::vector<std::string>{"p3:1"}));
}
