#define BOOST_TEST_MODULE sim_command
#include <boost/test/unit_test.hpp>

#include <string>

#include "sim/scenario_text.hpp"
#include "strom/runtime/sim/calibration.hpp"
#include "sim/sim_certificates.hpp"
#include "sim/sim_reports.hpp"
#include "support/scratch_dir.hpp"
#include "support/strom_program.hpp"

// `strom sim` as a user runs it: the example scenarios, failed expectations, bad files, the
// seed's determinism and `strom sim calibrate`.

using strom::test::run_strom;

namespace {

using strom::test::contains;
using strom::test::read_file;
using strom::test::report_field;
const std::string& examples = strom::test::sim_examples;

/// A scenario of 4 nodes over links that lose, duplicate and reorder 5% of the frames.
std::string lossy_scenario() {
  return strom::test::scenario_text(
    "nodes = (count = 4), link = (loss = 0.05, duplication = 0.05, reordering = 0.05)",
    "steps = 200", strom::test::given_costs(0.01, 0.0001, 20000),
    "events = [(at = (step = 50), kill = (node = \"n3\"))], "
    "expectations = [(completes = void), (nothingAppliedTwice = void)]");
}

} // namespace

BOOST_AUTO_TEST_CASE(dl4j_scalability_predicts_deeplearning4js_0_7051) {
  strom::test::scratch dir;
  const auto report = dir.path() / "dl4j.json";
  auto run =
    run_strom("sim " + examples + "dl4j_scalability.scenario --report-out " + report.string());
  BOOST_TEST(run.status == 0, run.output);
  const auto json = read_file(report);
  BOOST_TEST(report_field(json, "passed") == "true");
  BOOST_TEST(std::stod(report_field(json, "scaling_efficiency")) == 0.7051,
             boost::test_tools::tolerance(0.01 / 0.7051));
  BOOST_TEST(contains(json, "\"strom_design\":[{\"topology\":\"plain\""));
}

BOOST_AUTO_TEST_CASE(mesh_4096_runs_to_the_end_and_passes) {
  strom::test::scratch dir;
  const auto report = dir.path() / "mesh.json";
  auto run = run_strom("sim " + examples + "mesh_4096.scenario --report-out " + report.string());
  BOOST_TEST(run.status == 0, run.output);
  const auto json = read_file(report);
  BOOST_TEST(report_field(json, "passed") == "true");
  BOOST_TEST(report_field(json, "nodes") == "4096");
  BOOST_TEST(report_field(json, "nodes_lost") == "1");
}

BOOST_AUTO_TEST_CASE(scaling_4_nodes_passes_in_model_mode) {
  auto run = run_strom("sim " + examples + "scaling_4_nodes.scenario");
  BOOST_TEST(run.status == 0, run.output);
}

BOOST_AUTO_TEST_CASE(a_failed_expectation_exits_1_naming_it) {
  strom::test::scratch dir;
  const auto scenario = dir.write(
    "slow.scenario",
    strom::test::scenario_text("nodes = (count = 2)", "steps = 50",
                               strom::test::given_costs(0.01, 0, 1000),
                               "expectations = [(completes = void), "
                               "(samplesPerSecondAtLeast = 1e9)]"));
  const auto report = dir.path() / "r.json";
  auto run = run_strom("sim " + scenario.string() + " --report-out " + report.string());
  BOOST_TEST(run.status == 1, run.output);
  BOOST_TEST(contains(run.output, "failed expectations: samplesPerSecondAtLeast "
                                  "(expectations[1]): expected at least 1000000000 samples/s"),
             run.output);
  BOOST_TEST(!contains(run.output, "completes ("), run.output);
  BOOST_TEST(report_field(read_file(report), "passed") == "false");
}

// #41: an event past the job's end is refused before the run, naming it; one at a time the
// run never reaches fails the run, and the report says when each event happened.
BOOST_AUTO_TEST_CASE(events_past_the_end_are_refused_and_events_never_reached_fail_the_run) {
  strom::test::scratch dir;
  const auto with_events = [&](const std::string& name, const std::string& events) {
    return dir.write(name + ".scenario",
                     strom::test::scenario_text("nodes = (count = 2)", "steps = 200",
                                                strom::test::given_costs(0.01, 0, 1000),
                                                "events = [" + events + "]"));
  };
  auto past = run_strom("sim " + with_events("past", "(at = (step = 20), slowDown = (node = "
                                                     "\"n1\")), (at = (step = 401), kill = "
                                                     "(node = \"n2\"))").string());
  BOOST_TEST(past.status == 1, past.output);
  BOOST_TEST(contains(past.output, "past.scenario: events[1].at: step 401 is past the job's "
                                   "end, step 400 (steps = 200 of 2 workers)"),
             past.output);
  const auto report = dir.path() / "late.json";
  auto late = run_strom("sim " + with_events("late", "(at = (step = 20), slowDown = (node = "
                                                     "\"n1\")), (at = (seconds = 3600), kill = "
                                                     "(node = \"n2\"))").string()
                        + " --report-out " + report.string());
  BOOST_TEST(late.status == 1, late.output);
  BOOST_TEST(contains(late.output, "fires (events[1]): expected kill at 3600 s happens, got "
                                   "never happened: the job ended at"),
             late.output);
  const auto json = read_file(report);
  BOOST_TEST(report_field(json, "passed") == "false");
  // The job's 20th step is the 10th of each of its 2 workers: 9 steps of 10 ms went before.
  BOOST_TEST(std::stod(report_field(json, "fired_seconds")) == 0.09,
             boost::test_tools::tolerance(0.15));
  BOOST_TEST(contains(json, "\"field\":\"events[1]\",\"kind\":\"kill\",\"at\":\"3600 s\","
                            "\"fired_seconds\":null"),
             json);
}

BOOST_AUTO_TEST_CASE(a_bad_scenario_exits_1_naming_file_field_and_value) {
  strom::test::scratch dir;
  const auto scenario = dir.write(
    "bad.scenario", strom::test::scenario_text("nodes = (count = 0)", "steps = 5",
                                               strom::test::given_costs(0.01, 0, 1000)));
  auto run = run_strom("sim " + scenario.string());
  BOOST_TEST(run.status == 1, run.output);
  BOOST_TEST(contains(run.output, "bad.scenario: cluster.nodes.count: 0 is outside"), run.output);
}

BOOST_AUTO_TEST_CASE(live_mode_needs_the_costs_of_a_step_and_names_the_field) {
  strom::test::scratch dir;
  const auto scenario = dir.write(
    "nocosts.scenario", "(name = \"test\", mode = live, cluster = (nodes = (count = 2)), "
                            + strom::test::inline_job() + ", epochs = 1)");
  auto run = run_strom("sim " + scenario.string());
  BOOST_TEST(run.status == 1, run.output);
  BOOST_TEST(contains(run.output, "nocosts.scenario: costs: live mode charges each step"),
             run.output);
}

BOOST_AUTO_TEST_CASE(model_mode_refuses_server_nodes_naming_the_node) {
  auto run = run_strom("sim " + examples + "server_failover.scenario --mode model");
  BOOST_TEST(run.status == 1, run.output);
  BOOST_TEST(contains(run.output, "cluster.nodes.list[2].server: model mode does not model "
                                  "parameter servers"),
             run.output);
}

BOOST_AUTO_TEST_CASE(tls_flags_model_tls_links_and_refuse_what_no_node_could_present) {
  strom::test::scratch dir;
  const auto ours = dir.path() / "ours";
  const auto theirs = dir.path() / "theirs";
  strom::test::make_certificates(ours, {"w1"}, {"alice"});
  strom::test::make_certificates(theirs, {"w9"});
  const auto scenario = "sim " + examples + "scaling_4_nodes.scenario --mode model ";
  const auto report = dir.path() / "report.json";
  auto sealed = run_strom(scenario + strom::test::tls_flags(ours, "w1") + " --report-out "
                          + report.string());
  BOOST_TEST(sealed.status == 0, sealed.output);
  BOOST_TEST(contains(read_file(report), "\"tls\":{\"identity\":\"w1\",\"links\":null"));
  auto client = run_strom(scenario + strom::test::tls_flags(ours, "alice"));
  BOOST_TEST(client.status == 1, client.output);
  BOOST_TEST(contains(client.output, "the TLS identity 'alice' is a client's certificate"),
             client.output);
  auto stranger = run_strom(scenario + strom::test::tls_flags(theirs, "w9", ours));
  BOOST_TEST(stranger.status == 1, stranger.output);
  BOOST_TEST(contains(stranger.output, "w9.pem: not signed by the CA"), stranger.output);
  // Deeplearning4j's example gives its costs without TLS's: the error says what is missing.
  auto no_rates = run_strom("sim " + examples + "dl4j_scalability.scenario "
                            + strom::test::tls_flags(ours, "w1"));
  BOOST_TEST(no_rates.status == 1, no_rates.output);
  BOOST_TEST(contains(no_rates.output, "dl4j_scalability.scenario: costs: TLS links (--tls-*) "
                                       "need"),
             no_rates.output);
}

BOOST_AUTO_TEST_CASE(an_unknown_option_is_a_usage_error) {
  auto run = run_strom("sim " + examples + "scaling_4_nodes.scenario --svg-out x.svg");
  BOOST_TEST(run.status == 2, run.output);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_trace_and_another_seed_another) {
  strom::test::scratch dir;
  const auto scenario = dir.write("lossy.scenario", lossy_scenario());
  auto hash_of = [&](int seed, const std::string& name) {
    const auto report = dir.path() / (name + ".json");
    const auto trace = dir.path() / (name + ".jsonl");
    auto run = run_strom("sim " + scenario.string() + " --seed " + std::to_string(seed)
                         + " --report-out " + report.string() + " --trace-out " + trace.string());
    BOOST_TEST(run.status == 0, run.output);
    BOOST_TEST(!read_file(trace).empty());
    return report_field(read_file(report), "trace_sha256");
  };
  const auto first = hash_of(7, "a");
  BOOST_TEST(first.size() == 66u);  // 64 hex digits, quoted
  BOOST_TEST(hash_of(7, "b") == first);
  BOOST_TEST(read_file(dir.path() / "a.jsonl") == read_file(dir.path() / "b.jsonl"));
  BOOST_TEST(hash_of(8, "c") != first);
}

BOOST_AUTO_TEST_CASE(calibrate_writes_a_file_that_scenarios_read) {
  strom::test::scratch dir;
  const auto out = dir.path() / "mlp.calibration";
  auto run = run_strom("sim calibrate " + std::string{STROM_SOURCE_DIR}
                       + "/examples/fashion_mlp.job -o " + out.string());
  BOOST_TEST(run.status == 0, run.output);
  auto table = strom::runtime::sim::load_calibration_file(out.string());
  BOOST_REQUIRE_MESSAGE(table, (table ? "" : table.err().message));
  BOOST_TEST(table->base.parameters == 535818u);  // 784-512-256-10
  BOOST_TEST(table->base.step_seconds > 0);
  BOOST_TEST(table->points.size() == 4u);
}
