#define BOOST_TEST_MODULE sim_scenario
#include <boost/test/unit_test.hpp>

#include <string>

#include "sim/scenario_text.hpp"
#include "strom/runtime/sim/scenario.hpp"

// Reading scenario files: a good one gives the cluster, events and expectations it says; a
// bad one is refused naming the file, the field and the value.

using namespace strom::runtime::sim;
using strom::test::given_costs;
using strom::test::scenario_text;

namespace {

const std::string examples = std::string{STROM_SOURCE_DIR} + "/examples/sim/";

/// The error of parsing `text` as "bad.scenario"; fails the test when it parses.
std::string refusal(const std::string& text) {
  auto parsed = parse_scenario(text, "bad.scenario", examples);
  BOOST_REQUIRE_MESSAGE(!parsed, "parsed although it should not: " << text);
  return parsed.err().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string costs = given_costs(0.01, 0.001, 1000);

} // namespace

BOOST_AUTO_TEST_CASE(a_good_scenario_gives_its_nodes_events_and_expectations) {
  auto s = parse_scenario(
    scenario_text("nodes = (list = [(name = \"a\"), (name = \"b\", speedFactor = 0.5, "
                  "workers = 3)]), topology = mesh, fanout = 2",
                  "steps = 50", costs,
                  "events = [(at = (seconds = 1.5), kill = (node = \"b\", silent = true)), "
                  "(at = (step = 7), join = (node = (name = \"c\")))], "
                  "expectations = [(completes = void), (samplesPerSecondAtLeast = 10)]"),
    "good.scenario", ".");
  BOOST_REQUIRE_MESSAGE(s, (s ? "" : s.err().message));
  BOOST_TEST(s->nodes.size() == 2u);
  BOOST_TEST(s->nodes[1].name == "b");
  BOOST_TEST(s->nodes[1].speed_factor == 0.5);
  BOOST_TEST(s->nodes[1].workers == 3u);
  BOOST_TEST(s->nodes[0].workers == 1u);
  BOOST_TEST(s->nodes[0].link.bytes_per_second == 1.25e9);  // 10 Gbit/s by default
  BOOST_TEST((s->topology.kind == strom::actors::topology_kind::mesh));
  BOOST_TEST(s->topology.fanout == 2u);
  BOOST_TEST(s->steps == 50u);
  BOOST_REQUIRE(s->events.size() == 2u);
  BOOST_TEST((s->events[0].kind == event_kind::kill));
  BOOST_TEST(s->events[0].silent);
  BOOST_TEST(s->events[0].at.value == 1.5);
  BOOST_TEST((s->events[1].kind == event_kind::join));
  BOOST_TEST(s->events[1].joining.name == "c");
  BOOST_REQUIRE(s->expectations.size() == 2u);
  BOOST_TEST((s->expectations[1].kind == expectation_kind::samples_per_second_at_least));
  BOOST_REQUIRE(s->costs);
  BOOST_TEST(s->costs->batch_size == 10u);  // the job's
  BOOST_TEST(s->staleness == 1u);
}

BOOST_AUTO_TEST_CASE(every_example_scenario_parses) {
  for (const char* name : {"mesh_4096", "dl4j_scalability", "scaling_4_nodes"}) {
    auto s = load_scenario_file(examples + name + ".scenario");
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(s.ok(), (s ? "" : s.err().message)); }
  }
}

BOOST_AUTO_TEST_CASE(a_count_of_nodes_names_them_n1_to_nN) {
  auto s = parse_scenario(scenario_text("nodes = (count = 3)", "steps = 5", costs), "c", ".");
  BOOST_REQUIRE(s);
  BOOST_TEST(s->nodes.back().name == "n3");
}

BOOST_AUTO_TEST_CASE(a_syntax_error_names_the_file_line_and_column) {
  const auto message = refusal("(name = \"x\",\n  clustr = ())");
  BOOST_TEST(contains(message, "bad.scenario:2:3: Struct has no field named 'clustr'"), message);
}

BOOST_AUTO_TEST_CASE(an_event_naming_an_unknown_node_names_the_field_and_the_node) {
  const auto message = refusal(scenario_text(
    "nodes = (count = 2)", "steps = 5", costs,
    "events = [(at = (step = 3), hang = (node = \"n9\"))]"));
  BOOST_TEST(contains(message, "bad.scenario: events[0].hang.node: 'n9' is not a node of the "
                               "cluster (n1, n2)"),
             message);
}

BOOST_AUTO_TEST_CASE(a_misspelled_enum_value_names_the_field_and_the_valid_values) {
  const auto message = refusal(scenario_text("nodes = (count = 2), topology = star", "steps = 5",
                                             costs));
  BOOST_TEST(contains(message, "'star' is not a valid value for 'topology'"), message);
  BOOST_TEST(contains(message, "bad.scenario:1:"), message);
}

BOOST_AUTO_TEST_CASE(a_value_out_of_range_names_the_field_and_the_value) {
  const auto message = refusal(scenario_text(
    "nodes = (list = [(name = \"a\", speedFactor = -2)])", "steps = 5", costs));
  BOOST_TEST(contains(message, "bad.scenario: cluster.nodes.list[0].speedFactor: -2 is outside"),
             message);
}

BOOST_AUTO_TEST_CASE(a_loss_of_one_is_refused_naming_the_link) {
  const auto message = refusal(scenario_text("nodes = (count = 2), link = (loss = 1)",
                                             "steps = 5", costs));
  BOOST_TEST(contains(message, "bad.scenario: cluster.link.loss: 1 is outside [0, 1)"), message);
}

BOOST_AUTO_TEST_CASE(a_missing_calibration_file_names_the_field_and_the_path) {
  const auto message = refusal(scenario_text("nodes = (count = 2)", "steps = 5",
                                             "costs = (calibration = \"no_such.calibration\")"));
  BOOST_TEST(contains(message, "bad.scenario: costs.calibration: "), message);
  BOOST_TEST(contains(message, "no_such.calibration: cannot open calibration file"), message);
}

BOOST_AUTO_TEST_CASE(a_missing_job_file_names_the_field_and_the_path) {
  const auto message = refusal(
    "(name = \"x\", cluster = (nodes = (count = 1)), job = (path = \"nowhere.job\"))");
  BOOST_TEST(contains(message, "bad.scenario: job.path: "), message);
  BOOST_TEST(contains(message, "nowhere.job: cannot open job file"), message);
}

BOOST_AUTO_TEST_CASE(a_joining_node_may_not_reuse_a_name) {
  const auto message = refusal(scenario_text(
    "nodes = (count = 2)", "steps = 5", costs,
    "events = [(at = (step = 3), join = (node = (name = \"n2\")))]"));
  BOOST_TEST(contains(message, "events[0].join.node.name: 'n2' is already a node's name"),
             message);
}

BOOST_AUTO_TEST_CASE(a_bad_inline_job_is_refused_naming_its_field) {
  const auto message = refusal(
    "(name = \"x\", cluster = (nodes = (count = 1)), job = (inline = (name = \"j\", network = "
    "(input = (width = 10), layers = [(output = (units = 2))]), distributed = (fanout = 5000))))");
  BOOST_TEST(contains(message, "distributed.fanout: 5000 is outside"), message);
}

BOOST_AUTO_TEST_CASE(model_mode_without_costs_says_what_is_missing) {
  auto s = parse_scenario(
    "(name = \"x\", cluster = (nodes = (count = 1)), " + strom::test::inline_job() + ")", "nc",
    ".");
  BOOST_REQUIRE(s);
  auto ok = require_model_costs(*s);
  BOOST_REQUIRE(!ok);
  BOOST_TEST(contains(ok.err().message, "nc: costs: model mode needs the costs of a step"));
}
