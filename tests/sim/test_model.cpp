#define BOOST_TEST_MODULE sim_model
#include <boost/test/unit_test.hpp>

#include <string>

#include "sim/scenario_text.hpp"
#include "strom/runtime/sim/model/failure_timing.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/scenario.hpp"

// The model on cases whose answers can be worked out by hand.

using namespace strom::runtime::sim;
using strom::test::given_costs;
using strom::test::scenario_text;

namespace {

/// Runs the model of `text`; fails the test when it does not parse or run.
model_outcome run(const std::string& text, std::uint64_t seed = 1,
                  assumptions assumed = assumptions::strom) {
  auto s = parse_scenario(text, "test.scenario", ".");
  BOOST_REQUIRE_MESSAGE(s, (s ? "" : s.err().message));
  sim_trace trace;
  auto out = run_model(*s, assumed, seed, trace);
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.err().message));
  return *out;
}

/// The fault recorded for `node`.
const model_fault& fault_of(const model_outcome& m, const std::string& node) {
  for (const auto& f : m.faults)
    if (f.node == node)
      return f;
  BOOST_FAIL("no fault recorded for " << node);
  return m.faults.front();
}

} // namespace

BOOST_AUTO_TEST_CASE(one_worker_alone_runs_at_its_compute_rate) {
  // A lone trainer takes plain steps: 10 samples every 10 ms, whatever sharing would cost.
  auto m = run(scenario_text("nodes = (count = 1)", "steps = 100", given_costs(0.01, 0.005, 1000)));
  BOOST_TEST(m.completed);
  BOOST_TEST(m.samples_trained == 1000u);
  BOOST_TEST(m.simulated_seconds == 1.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m.samples_per_second == 1000.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m.scaling_efficiency == 1.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m.frames_sent == 0u);
}

BOOST_AUTO_TEST_CASE(plain_over_a_slow_link_runs_at_the_hubs_bandwidth) {
  // Two nodes send 1.25 MB a step each to the hub, which sends each the other's: 2.5 MB a
  // step over 1 Gbit/s (125 MB/s) is 20 ms, against 1 ms of compute.
  auto m = run(scenario_text(
    "nodes = (count = 2), topology = plain, link = (latencySeconds = 0, "
    "bandwidthGbitPerSecond = 1)",
    "steps = 200", given_costs(0.001, 0, 1'250'000)));
  BOOST_TEST(m.completed);
  const double bandwidth_bound = 2 * 10 / 0.020;  // 2 nodes x 10 samples every 20 ms
  BOOST_TEST(m.samples_per_second == bandwidth_bound, boost::test_tools::tolerance(0.02));
  BOOST_TEST(m.root.name == "hub");
  // Every step's frames but the last's, which ends the job before it is sent.
  BOOST_TEST(static_cast<double>(m.root.bytes_out) == 200.0 * 2 * 1'250'000,
             boost::test_tools::tolerance(0.01));
  BOOST_TEST(m.max_links == 2u);
}

BOOST_AUTO_TEST_CASE(a_silent_kill_is_found_after_exactly_the_heartbeat_timeout) {
  // Pings at whole seconds; the node vanishes at 3 s, so the ping of 3 s is the first
  // unanswered one and its timeout ends 10 s later.
  auto m = run(scenario_text(
    "nodes = (count = 3), link = (latencySeconds = 0), heartbeatIntervalSeconds = 1, "
    "heartbeatTimeoutSeconds = 10",
    "steps = 3000", given_costs(0.01, 0, 1000),
    "events = [(at = (seconds = 3), kill = (node = \"n2\", silent = true))]"));
  BOOST_TEST(m.completed);
  const auto& f = fault_of(m, "n2");
  BOOST_TEST(f.detected_after == 10.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(f.remapped_after >= 0);
  BOOST_TEST(m.topology_version == 2u);
}

BOOST_AUTO_TEST_CASE(a_killed_process_is_found_one_hop_later) {
  auto m = run(scenario_text("nodes = (count = 3), link = (latencySeconds = 0.001)",
                             "steps = 600", given_costs(0.01, 0, 1000),
                             "events = [(at = (seconds = 2), kill = (node = \"n3\"))]"));
  BOOST_TEST(fault_of(m, "n3").detected_after == 0.001, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m.samples_redone == 10u);  // its step under way
}

BOOST_AUTO_TEST_CASE(a_node_that_resumes_before_its_timeout_is_not_lost) {
  auto m = run(scenario_text("nodes = (count = 2)", "steps = 1000", given_costs(0.01, 0, 1000),
                             "events = [(at = (seconds = 1), hang = (node = \"n2\")), "
                             "(at = (seconds = 4), resume = (node = \"n2\"))]"));
  BOOST_TEST(m.completed);
  BOOST_TEST(fault_of(m, "n2").detected_after < 0);
  BOOST_TEST(m.topology_version == 1u);
  // Everyone waited for it: 3 s with no progress (n1 got one step ahead meanwhile).
  BOOST_TEST(m.simulated_seconds == 3.0 + 1000 * 0.01, boost::test_tools::tolerance(0.001));
}

BOOST_AUTO_TEST_CASE(a_slow_node_paces_everyone) {
  // Synchronous-ish: n2 takes 20 ms a step, and n1 may run at most one step ahead of it.
  auto m = run(scenario_text(
    "nodes = (list = [(name = \"n1\"), (name = \"n2\", speedFactor = 0.5)])", "steps = 500",
    given_costs(0.01, 0, 1000)));
  BOOST_TEST(m.scaling_efficiency == 0.5, boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_CASE(deeplearning4js_form_decodes_every_workers_update_in_series) {
  // 8 nodes of 4 workers: 550 / (550 + 50 + 32 x 5 + 20) = 0.7051.
  auto m = run(scenario_text("nodes = (count = 8), workersPerNode = 4", "steps = 100",
                             "costs = (given = (stepSeconds = 0.55, encodeSeconds = 0.05, "
                             "decodeSeconds = 0.005, overheadSeconds = 0.02, frameBytes = 40000))"),
               1, assumptions::deeplearning4j);
  BOOST_TEST(m.scaling_efficiency == 550.0 / 780.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(a_joining_node_trains_after_its_snapshot) {
  auto m = run(scenario_text("nodes = (count = 2)", "steps = 500", given_costs(0.01, 0, 1000),
                             "events = [(at = (seconds = 1), join = (node = (name = \"n3\")))], "
                             "expectations = [(restoreWithinSeconds = 1)]"));
  BOOST_TEST(m.completed);
  const auto& f = fault_of(m, "n3");
  BOOST_TEST(f.restored_after > 0);
  BOOST_TEST(f.restored_after < 0.1);
  BOOST_TEST(m.topology_version == 2u);
}

BOOST_AUTO_TEST_CASE(a_scheduler_restart_resumes_from_the_last_epoch) {
  // 2 nodes of 10-sample batches, 200 samples an epoch: 10 steps an epoch, 100 ms each.
  auto m = run(scenario_text("nodes = (count = 2)", "epochs = 3",
                             "costs = (given = (stepSeconds = 0.01, encodeSeconds = 0, "
                             "decodeSeconds = 0, overheadSeconds = 0, frameBytes = 100, "
                             "samplesPerEpoch = 200))",
                             "events = [(at = (seconds = 0.15), schedulerKill = void), "
                             "(at = (seconds = 1), schedulerRestart = void)]"));
  BOOST_TEST(m.completed);
  BOOST_TEST(m.samples_trained == 600u);
  // Killed in the 5th step of epoch 2: 4 steps of 2 nodes since the checkpoint, and the
  // steps under way, are trained again.
  BOOST_TEST(m.samples_redone == 4u * 2 * 10 + 2 * 10);
}

BOOST_AUTO_TEST_CASE(losing_every_node_fails_the_job) {
  auto m = run(scenario_text("nodes = (count = 1)", "steps = 500", given_costs(0.01, 0, 1000),
                             "events = [(at = (step = 10), kill = (node = \"n1\"))]"));
  BOOST_TEST(!m.completed);
  BOOST_TEST(m.failure.find("every node was lost") != std::string::npos, m.failure);
}

BOOST_AUTO_TEST_CASE(a_mesh_plans_its_tree_with_the_products_topology) {
  auto m = run(scenario_text("nodes = (count = 10), topology = mesh, fanout = 3", "steps = 20",
                             given_costs(0.01, 0, 1000)));
  BOOST_TEST(m.topology == "mesh");
  BOOST_TEST(m.max_links == 4u);   // an interior node: its parent and 3 children
  BOOST_TEST(m.root.links == 3u);  // the root: 3 children
}

BOOST_AUTO_TEST_CASE(heartbeat_detection_waits_for_the_first_unanswered_ping) {
  BOOST_TEST(heartbeat_detection_time(3.0, 1.0, 10.0, 0.0) == 13.0);
  BOOST_TEST(heartbeat_detection_time(3.2, 1.0, 10.0, 0.0) == 14.0);
  // A ping sent just before the fault that arrives after it goes unanswered.
  BOOST_TEST(heartbeat_detection_time(3.0005, 1.0, 10.0, 0.001) == 13.0);
}

BOOST_AUTO_TEST_CASE(reconnecting_backs_off_from_100_ms_to_2_s) {
  // Attempts at 0.1, 0.3, 0.7, 1.5, 3.1, 5.1 s after the loss.
  BOOST_TEST(reconnect_time(0.0, 0.05, 0.0) == 0.1, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(reconnect_time(0.0, 1.0, 0.0) == 1.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(reconnect_time(0.0, 4.0, 0.001) == 5.101, boost::test_tools::tolerance(1e-12));
}
