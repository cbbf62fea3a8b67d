#define BOOST_TEST_MODULE sim_live
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/sim_certificates.hpp"
#include "sim/sim_reports.hpp"
#include "strom/runtime/sim/run_scenario.hpp"
#include "support/scratch_dir.hpp"
#include "support/strom_program.hpp"

// `strom sim` in live mode: the product's actors train in virtual time with faults on the
// links. Every live example passes, a seed gives one trace, the model predicts what live
// measures, a failed expectation is named, and a host program runs a scenario as the command
// does.

using strom::test::run_strom;

namespace {

using strom::test::contains;
using strom::test::read_file;
using strom::test::report_field;
const std::string& examples = strom::test::sim_examples;

/// Runs `scenario` with `flags`, expecting it to pass, and returns its report.
std::string report_of(strom::test::scratch& dir, const std::string& scenario,
                      const std::string& flags) {
  const auto report = dir.path() / "report.json";
  std::filesystem::remove(report);
  auto run = run_strom("sim " + scenario + " " + flags + " --report-out " + report.string());
  BOOST_TEST(run.status == 0, run.output);
  return read_file(report);
}

/// Runs `strom sim SCENARIO --report-out ...` for each of `scenarios` (paths), two at a time:
/// live mode runs a scenario's actors on one thread in virtual time, so two runs share the
/// two cores and report what they report one after the other (the nine examples: 93 s one
/// after the other, 61 s two at a time). The runs' outcomes and reports, in order; the checks
/// stay on the test's thread (Boost.Test's are not thread-safe).
std::vector<std::pair<strom::test::outcome, std::string>> run_two_at_a_time(
  strom::test::scratch& dir, const std::vector<std::string>& scenarios) {
  std::vector<std::pair<strom::test::outcome, std::string>> runs(scenarios.size());
  std::atomic<std::size_t> next{0};
  const auto lane = [&] {
    for (auto i = next++; i < scenarios.size(); i = next++) {
      const auto report = dir.path() / ("report_" + std::to_string(i) + ".json");
      runs[i].first = run_strom("sim " + scenarios[i] + " --report-out " + report.string());
      runs[i].second = read_file(report);
    }
  };
  std::thread other{lane};
  lane();
  other.join();
  return runs;
}

/// Writes `name`.scenario in `dir`: the example MLP live on `cluster` (the scenario's cluster
/// fields) for `length` ("epochs = N" or "steps = N"), with `events` and `expectations` (their
/// lists' items).
std::filesystem::path fashion_scenario(strom::test::scratch& dir, const std::string& name,
                                       const std::string& cluster, const std::string& length,
                                       const std::string& events,
                                       const std::string& expectations) {
  return dir.write(name + ".scenario",
                   "(name = \"" + name + "\", mode = live, cluster = (" + cluster
                     + "), job = (path = \"" + std::string{STROM_SOURCE_DIR}
                     + "/examples/fashion_mlp.job\"), " + length + ", costs = (calibration = \""
                     + examples + "fashion_mlp.calibration\"), events = [" + events
                     + "], expectations = [" + expectations + "])");
}

} // namespace

BOOST_AUTO_TEST_CASE(every_live_example_passes_and_meets_its_faults_as_the_product_does) {
  strom::test::scratch dir;
  const std::vector<std::string> names{"kill_and_rejoin", "hung_node", "partition_heal",
                                       "lossy_links", "corrupt_frames", "scheduler_restart",
                                       "straggler", "elastic_grow", "server_failover"};
  std::vector<std::string> scenarios;
  for (const auto& name : names)
    scenarios.push_back(examples + name + ".scenario");
  const auto runs = run_two_at_a_time(dir, scenarios);
  std::map<std::string, std::string> reports;
  for (std::size_t i = 0; i < names.size(); ++i) {
    BOOST_TEST_CONTEXT(names[i]) {
      const auto& [run, json] = runs[i];
      BOOST_TEST(run.status == 0, run.output);
      reports[names[i]] = json;
      BOOST_TEST(report_field(json, "mode") == "\"live\"");
      BOOST_TEST(report_field(json, "passed") == "true", json);
      BOOST_TEST(report_field(json, "duplicate_updates_applied") == "0");
    }
  }
  BOOST_TEST(report_field(reports["kill_and_rejoin"], "nodes_lost") == "1");
  BOOST_TEST(report_field(reports["kill_and_rejoin"], "nodes_restored") == "1");
  BOOST_TEST(report_field(reports["hung_node"], "nodes_lost") == "1");
  BOOST_TEST(report_field(reports["partition_heal"], "nodes_lost") == "2");
  BOOST_TEST(report_field(reports["partition_heal"], "nodes_restored") == "2");
  BOOST_TEST(std::stoull(report_field(reports["corrupt_frames"], "frames_rejected")) > 0);
  BOOST_TEST(contains(reports["lossy_links"], "\"frame_faults\":{\"dropped\":"));
  BOOST_TEST(!contains(reports["lossy_links"], "\"frame_faults\":{\"dropped\":0,"));
  BOOST_TEST(report_field(reports["scheduler_restart"], "scheduler_restarts") == "1");
  BOOST_TEST(report_field(reports["server_failover"], "server_failovers") == "1");
  BOOST_TEST(std::stoull(report_field(reports["lossy_links"], "duplicate_updates_dropped")) > 0);
  // A node three times slower holds the synchronous job to its pace.
  BOOST_TEST(std::stod(report_field(reports["straggler"], "scaling_efficiency")) < 0.4);
  // #41: a step is the same moment in both modes, the workers' steps counted together: the
  // model's kill at step 300 comes when the live one does (when the issue was filed, the model
  // counted one worker's steps and killed at 1.51 s, live at 0.38 s).
  const auto modelled = report_of(dir, examples + "kill_and_rejoin.scenario", "--mode model");
  const double live_kill = std::stod(report_field(reports["kill_and_rejoin"], "fired_seconds"));
  const double model_kill = std::stod(report_field(modelled, "fired_seconds"));
  BOOST_TEST_MESSAGE("kill at " << live_kill << " s live, " << model_kill << " s modelled");
  BOOST_TEST(model_kill / live_kill == 1.0, boost::test_tools::tolerance(0.1));
}

BOOST_AUTO_TEST_CASE(a_mesh_loses_an_interior_node_and_goes_on) {
  strom::test::scratch dir;
  // 6 nodes, fanout 2: n2 is interior (it relays for its children); the job_master remaps.
  const auto scenario = fashion_scenario(
    dir, "mesh", "nodes = (count = 6), topology = mesh, fanout = 2", "epochs = 1",
    "(at = (step = 200), kill = (node = \"n2\"))",
    "(completes = void), (nothingAppliedTwice = void), (accuracyAtLeast = 0.80)");
  const auto json = report_of(dir, scenario.string(), "");
  BOOST_TEST(report_field(json, "passed") == "true", json);
  BOOST_TEST(contains(json, "\"topology\":{\"kind\":\"mesh\",\"fanout\":2,\"version\":2"),
             json);
  BOOST_TEST(report_field(json, "nodes_lost") == "1");
}

// #40: the mesh of the issue, 8 nodes of fanout 2 with seed 42: interior n3 (it relays for
// its children) vanishes, so only the heartbeats tell, at the step 300 (the 8 workers'
// steps counted together: in their 38th) and at two other moments. The
// job_master remaps the mesh and the job ends with the accuracy of the undisturbed run. When
// the issue was filed it failed in 3 of 3 runs ("node 6's relay did not count lost node 3's
// frames: no answer in time"), and at most moments still did later: CAF's test coordinator
// ran n3's children's relays and trainers on n3's queue, which a hung machine never runs
// (live_run::send_jobs_home).
BOOST_AUTO_TEST_CASE(a_mesh_loses_an_interior_node_silently_and_ends_as_undisturbed) {
  strom::test::scratch dir;
  const auto mesh = [&](const std::string& name, const std::string& events) {
    return fashion_scenario(dir, name, "nodes = (count = 8), topology = mesh, fanout = 2",
                            "epochs = 1", events,
                            "(completes = void), (nothingAppliedTwice = void)")
             .string()
           + " --seed 42";
  };
  const std::vector<std::string> steps{"160", "300", "800"};
  std::vector<std::string> scenarios{mesh("calm", "")};
  for (const auto& step : steps)
    scenarios.push_back(mesh("silent_" + step, "(at = (step = " + step
                                                 + "), kill = (node = \"n3\", silent = true))"));
  const auto runs = run_two_at_a_time(dir, scenarios);
  const double undisturbed = std::stod(report_field(runs[0].second, "test_accuracy"));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    BOOST_TEST_CONTEXT("lost at step " << steps[i]) {
      const auto& [run, lost] = runs[i + 1];
      BOOST_TEST(run.status == 0, run.output);
      BOOST_TEST(report_field(lost, "passed") == "true", lost);
      BOOST_TEST(report_field(lost, "nodes_lost") == "1", lost);
      const double disturbed = std::stod(report_field(lost, "test_accuracy"));
      BOOST_TEST_MESSAGE("accuracy " << disturbed << " against " << undisturbed
                                     << " undisturbed");
      BOOST_TEST(disturbed >= undisturbed - 0.015);
    }
  }
}

// #40: a scheduler that never comes back ends the run as `strom submit` ends, the job failed
// (its nodes stop waiting after their reconnect timeout), with a report in which `fails` holds.
BOOST_AUTO_TEST_CASE(a_scheduler_killed_for_good_fails_the_job_with_a_report) {
  strom::test::scratch dir;
  const auto scenario =
    fashion_scenario(dir, "gone", "nodes = (count = 2)", "epochs = 1",
                     "(at = (step = 100), schedulerKill = void)", "(fails = void)");
  const auto json = report_of(dir, scenario.string(), "");
  BOOST_TEST(report_field(json, "passed") == "true", json);
  BOOST_TEST(report_field(json, "completed") == "false", json);
  BOOST_TEST(contains(report_field(json, "failure"), "never came back"), json);
}

BOOST_AUTO_TEST_CASE(a_scenario_in_steps_runs_the_whole_epochs_that_hold_them) {
  strom::test::scratch dir;
  // 2 workers of 64 take 469 steps an epoch of 60,000 samples: 500 steps are 2 epochs.
  const auto scenario = fashion_scenario(dir, "steps", "nodes = (count = 2)", "steps = 500", "",
                                         "(completes = void)");
  const auto json = report_of(dir, scenario.string(), "");
  BOOST_TEST(report_field(json, "passed") == "true", json);
  BOOST_TEST(report_field(json, "train_samples") == "120000");
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_trace_and_another_seed_another) {
  strom::test::scratch dir;
  const auto scenario = examples + "kill_and_rejoin.scenario";
  // Two of them at once: the trace does not depend on what else the machine runs.
  const auto runs = run_two_at_a_time(
    dir, {scenario + " --seed 7", scenario + " --seed 7", scenario + " --seed 8"});
  for (const auto& [run, json] : runs)
    BOOST_TEST(run.status == 0, run.output);
  const auto first = report_field(runs[0].second, "trace_sha256");
  const auto again = report_field(runs[1].second, "trace_sha256");
  const auto other = report_field(runs[2].second, "trace_sha256");
  BOOST_TEST(first.size() == 66u, first);  // 64 hex digits in quotes
  BOOST_TEST(first == again);
  BOOST_TEST(first != other);
}

BOOST_AUTO_TEST_CASE(over_tls_links_the_cluster_trains_and_a_seed_still_gives_one_trace) {
  strom::test::scratch dir;
  strom::test::make_certificates(dir.path(), {"w1"});
  const auto scenario = examples + "scaling_4_nodes.scenario --mode live --seed 7 ";
  const auto tls = strom::test::tls_flags(dir.path(), "w1");
  const auto runs = run_two_at_a_time(dir, {scenario + tls, scenario + tls, scenario});
  for (const auto& [run, json] : runs)
    BOOST_TEST(run.status == 0, run.output);
  const auto& first = runs[0].second;
  // 4 nodes and the hub: a connection each way on each of 4 links, every frame sealed and
  // opened on it, nothing failed.
  BOOST_TEST(contains(first, "\"tls\":{\"identity\":\"w1\",\"links\":8,\"handshake_bytes\":"),
             first);
  BOOST_TEST(contains(first, "\"failures\":0}"), first);
  BOOST_TEST(report_field(first, "passed") == "true", first);
  BOOST_TEST(std::stod(report_field(first, "test_accuracy")) > 0.8);
  BOOST_TEST(report_field(runs[1].second, "trace_sha256") == report_field(first, "trace_sha256"));
  BOOST_TEST(report_field(runs[2].second, "tls") == "null");
}

BOOST_AUTO_TEST_CASE(the_trace_file_holds_the_events_and_the_frame_faults) {
  strom::test::scratch dir;
  const auto trace = dir.path() / "trace.jsonl";
  report_of(dir, examples + "corrupt_frames.scenario", "--trace-out " + trace.string());
  const auto lines = read_file(trace);
  BOOST_TEST(contains(lines, "\"event\":\"frameFault\""), lines.substr(0, 2000));
  BOOST_TEST(contains(lines, "\"fault\":\"corrupt\",\"from\":\"n2\",\"to\":\"scheduler\""));
  BOOST_TEST(contains(lines, "\"finished\":true"));
}

BOOST_AUTO_TEST_CASE(scaling_4_nodes_model_predicts_within_20_percent_of_live) {
  strom::test::scratch dir;
  const auto scenario = examples + "scaling_4_nodes.scenario";
  const double live =
    std::stod(report_field(report_of(dir, scenario, "--mode live"), "samples_per_second"));
  const double model =
    std::stod(report_field(report_of(dir, scenario, "--mode model"), "samples_per_second"));
  BOOST_TEST(live > 0);
  BOOST_TEST(model / live >= 0.8, "model " << model << ", live " << live);
  BOOST_TEST(model / live <= 1.2, "model " << model << ", live " << live);
}

BOOST_AUTO_TEST_CASE(a_failed_expectation_exits_1_and_is_named) {
  strom::test::scratch dir;
  std::string text = read_file(examples + "straggler.scenario");
  // The straggler scenario, expecting the scaling of a cluster without one.
  const auto swap = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
  };
  swap("atLeast = 0.25, atMost = 0.40", "atLeast = 0.90, atMost = 1.00");
  swap("\"../fashion_mlp.job\"",
       "\"" + std::string{STROM_SOURCE_DIR} + "/examples/fashion_mlp.job\"");
  swap("\"fashion_mlp.calibration\"", "\"" + examples + "fashion_mlp.calibration\"");
  const auto scenario = dir.write("slow.scenario", text);
  auto run = run_strom("sim " + scenario.string());
  BOOST_TEST(run.status == 1, run.output);
  BOOST_TEST(contains(run.output, "scalingEfficiency (expectations[2]): expected scaling "
                                  "efficiency in [0.9, 1]"),
             run.output);
}

BOOST_AUTO_TEST_CASE(a_host_program_runs_a_scenario_as_the_command_does) {
  namespace sim = strom::runtime::sim;
  auto scenario = sim::load_scenario_file(examples + "corrupt_frames.scenario");
  if (!scenario)
    BOOST_FAIL(scenario.err().message);
  sim::run_options options;
  options.seed = 7;
  auto result = sim::run_scenario(*scenario, options);
  if (!result)
    BOOST_FAIL(result.err().message);
  BOOST_TEST(result->passed);
  BOOST_TEST(std::string{sim::to_string(result->mode)} == "live");
  strom::test::scratch dir;
  const auto command = report_of(dir, examples + "corrupt_frames.scenario", "--seed 7");
  BOOST_TEST(report_field(command, "trace_sha256") == "\"" + result->trace_sha256 + "\"");
}

BOOST_AUTO_TEST_CASE(the_html_page_charts_the_run_and_marks_its_events) {
  strom::test::scratch dir;
  const auto page = dir.path() / "kill.html";
  report_of(dir, examples + "kill_and_rejoin.scenario", "--html-out " + page.string());
  const auto html = read_file(page);
  BOOST_TEST(contains(html, "uPlot"));  // the vendored library, inlined: no network
  BOOST_TEST(!contains(html, "<script src="));
  for (const auto* id : {"\"train_loss\"", "\"test_accuracy\"", "\"node_samples_per_second\"",
                         "\"link_bytes\"", "\"node_bytes\""})
    BOOST_TEST(contains(html, id), id);
  BOOST_TEST(contains(html, "\"label\":\"kill n3\""));
  BOOST_TEST(contains(html, "\"label\":\"restart n3\""));
  // Model mode has no training to chart, but its links and nodes.
  const auto model_page = dir.path() / "model.html";
  report_of(dir, examples + "scaling_4_nodes.scenario",
            "--mode model --html-out " + model_page.string());
  const auto model_html = read_file(model_page);
  BOOST_TEST(contains(model_html, "\"link_bytes\""));
  BOOST_TEST(!contains(model_html, "\"train_loss\""));
}
