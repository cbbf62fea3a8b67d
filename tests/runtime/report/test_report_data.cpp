// The HTML report's data (runtime/strom/runtime/report/): what each chart is drawn from in a
// metrics JSON and a trace, how bad input is refused, what the recorder keeps, and that the
// page carries everything inline.
#define BOOST_TEST_MODULE report_data
#include <boost/test/unit_test.hpp>

#include <regex>
#include <string>

#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/report/html_page.hpp"
#include "strom/runtime/report/report_data.hpp"
#include "strom/runtime/report/run_history.hpp"

namespace {

using namespace strom::runtime;

report_data read_ok(const std::string& metrics, const std::optional<std::string>& trace = {}) {
  auto data = read_report_data({metrics, "m.json", trace, "t.json"});
  BOOST_REQUIRE_MESSAGE(data, (data ? "" : data.err().message));
  return std::move(*data);
}

std::string read_error(const std::string& metrics, const std::optional<std::string>& trace = {}) {
  auto data = read_report_data({metrics, "m.json", trace, "t.json"});
  BOOST_REQUIRE(!data);
  return data.err().message;
}

const chart* find_chart(const report_data& data, const std::string& id) {
  for (const auto& c : data.charts)
    if (c.id == id)
      return &c;
  return nullptr;
}

const std::string two_epochs = R"({"job":"mlp","train_samples":1000,"epoch_history":[
  {"epoch":1,"train_loss":0.9,"test_loss":0.6,"test_accuracy":0.8,"seconds":2,"samples_per_second":500,"at_seconds":2.5},
  {"epoch":2,"train_loss":0.5,"test_loss":0.4,"test_accuracy":0.85,"seconds":2,"samples_per_second":520,"at_seconds":4.5}]})";

} // namespace

BOOST_AUTO_TEST_CASE(epoch_history_gives_loss_and_accuracy_per_epoch) {
  const auto data = read_ok(two_epochs);
  BOOST_TEST(data.job == "mlp");
  const auto* loss = find_chart(data, "loss");
  BOOST_REQUIRE(loss);
  BOOST_TEST(loss->series.size() == 2u);
  BOOST_TEST(loss->series[0].points.size() == 2u);
  BOOST_TEST(loss->series[0].points[1].first == 2.0);
  BOOST_TEST(loss->series[0].points[1].second == 0.5);
  BOOST_TEST(loss->series[1].points[0].second == 0.6);
  const auto* accuracy = find_chart(data, "accuracy");
  BOOST_REQUIRE(accuracy);
  BOOST_TEST(accuracy->series[0].points[1].second == 85.0);
  // #43: an epoch's speed is drawn against its epoch, as the other epoch charts are.
  const auto* speed = find_chart(data, "epoch_speed");
  BOOST_REQUIRE(speed);
  BOOST_TEST(!speed->time_axis);
  BOOST_TEST(speed->series[0].points[1].first == 2.0);
  BOOST_TEST(speed->series[0].points[1].second == 520.0);
}

// #43: the report lists what the run was told: the mode and topology the metrics name, and
// the command line and hyperparameters its command recorded.
BOOST_AUTO_TEST_CASE(the_runs_settings_are_listed_and_a_bad_one_is_named) {
  const auto data = read_ok(R"({"mode":"shared","topology":"plain","kvstore":"",
    "settings":{"command":"strom train mlp.job --epochs 2","batch size":"64"}})");
  const std::vector<std::pair<std::string, std::string>> expected{
    {"mode", "shared"}, {"topology", "plain"}, {"command", "strom train mlp.job --epochs 2"},
    {"batch size", "64"}};
  BOOST_TEST((data.settings == expected));
  BOOST_TEST(read_error(R"({"settings":{"seed":7}})")
             == "m.json.settings.seed: expected a string, found 7");
}

BOOST_AUTO_TEST_CASE(epochs_without_a_test_set_leave_the_accuracy_chart_out) {
  const auto data = read_ok(R"({"epoch_history":[{"epoch":1,"train_loss":0.9,"test_loss":null,
    "test_accuracy":null,"seconds":1,"samples_per_second":10,"at_seconds":1}]})");
  BOOST_TEST(find_chart(data, "loss") != nullptr);
  BOOST_TEST(find_chart(data, "accuracy") == nullptr);
}

BOOST_AUTO_TEST_CASE(node_history_gives_rates_bytes_threshold_and_density_per_node) {
  const auto data = read_ok(R"({"node_history":[
    {"at_seconds":1,"node":"a","samples":100,"bytes_sent":0,"bytes_received":0,"updates":0,"density_sum":0,"threshold":0},
    {"at_seconds":1,"node":"b","samples":50,"bytes_sent":1048576,"bytes_received":0,"updates":4,"density_sum":0.4,"threshold":0.002},
    {"at_seconds":2,"node":"a","samples":300,"bytes_sent":2097152,"bytes_received":0,"updates":10,"density_sum":0.5,"threshold":0.001}]})");
  const auto* speed = find_chart(data, "node_speed");
  BOOST_REQUIRE(speed);
  BOOST_REQUIRE(speed->series.size() == 2u);
  BOOST_TEST(speed->series[0].label == "a");
  BOOST_REQUIRE(speed->series[0].points.size() == 1u);
  BOOST_TEST(speed->series[0].points[0].second == 200.0);  // 200 samples in 1 s
  const auto* bytes = find_chart(data, "node_bytes");
  BOOST_REQUIRE(bytes);
  BOOST_TEST(bytes->series[0].points.back().second == 2.0);  // MiB
  BOOST_TEST(bytes->series[1].points.back().second == 1.0);
  const auto* threshold = find_chart(data, "threshold");
  BOOST_REQUIRE(threshold);
  BOOST_TEST(threshold->series[0].points.size() == 1u);  // a's first record had no update
  BOOST_TEST(threshold->series[1].points[0].second == 0.002);
  const auto* density = find_chart(data, "density");
  BOOST_REQUIRE(density);
  BOOST_TEST(density->series[0].points[0].second == 0.05);  // 0.5 over 10 updates
  // #43: each node's totals as bars, in the nodes' order.
  BOOST_REQUIRE(data.bars.size() == 2u);
  BOOST_TEST(data.bars[0].id == "node_samples");
  const std::vector<std::pair<std::string, double>> samples{{"a", 300.0}, {"b", 50.0}};
  BOOST_TEST((data.bars[0].bars == samples));
  const std::vector<std::pair<std::string, double>> mib{{"a", 2.0}, {"b", 1.0}};
  BOOST_TEST((data.bars[1].bars == mib));
}

// #43: a node's last record after the job ended (no new samples) is no drop to 0 samples/s.
BOOST_AUTO_TEST_CASE(a_nodes_record_after_its_last_step_draws_no_drop_to_zero) {
  const auto data = read_ok(R"({"node_history":[
    {"at_seconds":1,"node":"a","samples":100,"bytes_sent":0,"bytes_received":0,"updates":0,"density_sum":0,"threshold":0},
    {"at_seconds":2,"node":"a","samples":300,"bytes_sent":0,"bytes_received":0,"updates":0,"density_sum":0,"threshold":0},
    {"at_seconds":3,"node":"a","samples":300,"bytes_sent":0,"bytes_received":0,"updates":0,"density_sum":0,"threshold":0}]})");
  const auto* speed = find_chart(data, "node_speed");
  BOOST_REQUIRE(speed);
  BOOST_REQUIRE(speed->series[0].points.size() == 1u);
  BOOST_TEST(speed->series[0].points[0].second == 200.0);
}

BOOST_AUTO_TEST_CASE(membership_events_become_markers_on_the_time_axis) {
  const auto data = read_ok(R"({"membership_events":[{"at_seconds":3.5,"kind":"lost","count":1},
    {"at_seconds":6,"kind":"restored","count":1}]})");
  BOOST_REQUIRE(data.markers.size() == 2u);
  BOOST_TEST(data.markers[0].at_seconds == 3.5);
  BOOST_TEST(data.markers[0].label == "node lost");
  BOOST_TEST(data.markers[1].label == "node restored");
}

BOOST_AUTO_TEST_CASE(a_trace_gives_per_node_series_when_the_metrics_hold_no_node_history) {
  // Node 1 trains 3 batches, node 2 one; 1000 samples over 4 batches: 250 a batch.
  const std::string trace = R"({"traceEvents":[
    {"name":"process_name","ph":"M","pid":1,"args":{"name":"node 1"}},
    {"name":"batch","cat":"strom","ph":"X","pid":1,"tid":0,"ts":0,"dur":5,"args":{}},
    {"name":"batch","cat":"strom","ph":"X","pid":1,"tid":0,"ts":1000000,"dur":5,"args":{}},
    {"name":"batch","cat":"strom","ph":"X","pid":1,"tid":0,"ts":2000000,"dur":5,"args":{}},
    {"name":"batch","cat":"strom","ph":"X","pid":2,"tid":0,"ts":0,"dur":5,"args":{}},
    {"name":"relay_traffic","ph":"C","pid":2,"tid":1000,"ts":4000000,"args":{"bytes_received":3145728,"frames_forwarded":3}}]})";
  const auto data = read_ok(two_epochs, trace);
  const auto* speed = find_chart(data, "node_speed");
  BOOST_REQUIRE(speed);
  BOOST_REQUIRE(speed->series.size() == 2u);
  BOOST_TEST(speed->series[0].label == "node 1");
  double node1_samples = 0.0;  // rate x window, summed: every batch counted once
  const double window = speed->series[0].points[1].first - speed->series[0].points[0].first;
  for (const auto& [at, rate] : speed->series[0].points)
    node1_samples += rate * window;
  BOOST_TEST(node1_samples == 750.0, boost::test_tools::tolerance(1e-9));
  const auto* bytes = find_chart(data, "node_bytes");
  BOOST_REQUIRE(bytes);
  BOOST_TEST(bytes->series[0].label == "node 2");
  BOOST_TEST(bytes->series[0].points[0].second == 3.0);
}

BOOST_AUTO_TEST_CASE(node_history_wins_over_the_trace_but_a_bad_trace_is_still_refused) {
  const std::string metrics = R"({"train_samples":10,"node_history":[
    {"at_seconds":1,"node":"a","samples":1,"bytes_sent":0,"bytes_received":0,"updates":0,"density_sum":0,"threshold":0}]})";
  const auto data = read_ok(metrics, std::string{R"({"traceEvents":[
    {"name":"relay_traffic","ph":"C","pid":2,"tid":1000,"ts":1,"args":{"bytes_received":1,"frames_forwarded":1}}]})"});
  BOOST_TEST(find_chart(data, "node_bytes")->series[0].label == "a");
  BOOST_TEST(read_error(metrics, std::string{"{\"events\":[]}"})
             == "t.json: no traceEvents array: not a Chrome trace");
}

BOOST_AUTO_TEST_CASE(metrics_without_history_give_a_summary_and_no_empty_chart) {
  const auto data = read_ok(R"({"job":"x","test_accuracy":null,"final_loss":0.3,"epochs":2})");
  BOOST_TEST(data.charts.empty());
  BOOST_TEST(data.summary.size() == 2u);  // final loss and epochs; the null accuracy left out
}

BOOST_AUTO_TEST_CASE(a_malformed_metrics_file_is_refused_naming_it) {
  BOOST_TEST(read_error("{\"job\":") == "m.json: not a JSON document");
  BOOST_TEST(read_error("[1,2]") == "m.json: expected a JSON object at the top");
}

BOOST_AUTO_TEST_CASE(a_wrongly_typed_field_is_refused_naming_its_path_and_value) {
  const auto message = read_error(R"({"epoch_history":[{"epoch":"one","train_loss":1,
    "samples_per_second":1,"at_seconds":1}]})");
  BOOST_TEST(message == "m.json.epoch_history[0].epoch: expected a number, found \"one\"");
  BOOST_TEST(read_error(R"({"node_history":{}})") == "m.json.node_history: expected an array");
  BOOST_TEST(read_error(two_epochs, std::string{"{\"traceEvents\":[{\"ph\":\"X\",\"pid\":\"a\"}]}"})
             == "t.json.traceEvents[0].pid: expected a number, found \"a\"");
  BOOST_TEST(read_error(two_epochs, std::string{"{\"traceEvents\":[{\"ph\":\"C\"},7]}"})
             == "t.json.traceEvents[0].pid: expected a number, found nothing");
}

BOOST_AUTO_TEST_CASE(the_metrics_json_with_history_reads_back_into_the_same_series) {
  run_recorder recorder;
  recorder.on_epoch({1, 2, 0.7, 0.5, 0.81, 1.5, 400.0, ""});
  strom::actors::node_metrics figures;
  figures.node = "w1";
  figures.samples = 64;
  recorder.node(figures);
  recorder.set_settings({{"command", "strom train j.job"}});
  strom::actors::training_report report;
  report.job = "j";
  const auto history = recorder.history();
  const auto text = to_json(report, &history);
  BOOST_TEST(text.find("\"server_failovers\":0,\"settings\":{\"command\":") != std::string::npos);
  const auto data = read_ok(text);
  BOOST_REQUIRE(!data.settings.empty());
  BOOST_TEST(data.settings.back().second == "strom train j.job");
  const auto* accuracy = find_chart(data, "accuracy");
  BOOST_REQUIRE(accuracy);
  BOOST_TEST(accuracy->series[0].points[0].second == 81.0);
  BOOST_TEST(find_chart(data, "node_bytes") != nullptr);
}

BOOST_AUTO_TEST_CASE(each_tensors_sharing_is_written_and_charted) {
  strom::actors::tensor_sharing weights;
  weights.layer = 0;
  weights.tensor = "weights";
  weights.elements = 1000;
  weights.encoding = 0;  // threshold
  weights.threshold = 0.002f;
  weights.scale = 0.003f;
  weights.encodes = 10;
  weights.values_sent = 100;  // 1% a step
  weights.sent_mass = 3.0;
  weights.clipped_mass = 1.0;
  weights.encoders = 1;
  strom::actors::training_report report;
  report.job = "j";
  report.sharing_layers = {weights};
  const auto text = to_json(report);
  BOOST_TEST(text.find("\"sharing_layers\":[{\"layer\":0,\"tensor\":\"weights\",\"elements\":1000,"
                       "\"encoding\":\"threshold\",") != std::string::npos, text);
  BOOST_TEST(text.find("\"density\":0.01,\"clipped_fraction\":0.25,") != std::string::npos, text);

  run_recorder recorder;
  strom::actors::node_metrics figures;
  figures.node = "w1";
  figures.sent.tensors = {weights};
  recorder.node(figures);
  const auto history = recorder.history();
  const auto data = read_ok(to_json(report, &history));
  const auto* threshold = find_chart(data, "tensor_threshold");
  BOOST_REQUIRE(threshold);
  BOOST_REQUIRE(threshold->series.size() == 1u);
  BOOST_TEST(threshold->series[0].label == "layer 0 weights");
  BOOST_TEST(threshold->series[0].points[0].second == 0.002, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(the_recorder_replaces_a_nodes_figures_within_the_interval) {
  run_recorder recorder;
  strom::actors::node_metrics figures;
  figures.node = "w1";
  figures.samples = 10;
  recorder.node(figures);
  figures.samples = 20;
  recorder.node(figures);  // at once: within node_record_interval_seconds
  figures.node = "w2";
  recorder.node(figures);
  const auto history = recorder.history();
  BOOST_REQUIRE(history.nodes.size() == 2u);
  BOOST_TEST(history.nodes[0].node == "w1");
  BOOST_TEST(history.nodes[0].samples == 20u);
}

BOOST_AUTO_TEST_CASE(a_remote_clients_recorder_takes_each_nodes_bytes_from_the_scheduler) {
  // strom submit hears of nodes only through the scheduler's progress reports: their figures,
  // bytes received by each node's relay included (0 before protocol 14).
  run_recorder recorder{nullptr, cluster_source::scheduler_reports};
  strom::actors::cluster_figures figures;
  figures.nodes.push_back({"w1", 640, 1000, 10, 0.05, 0.001, 3000});
  recorder.on_cluster(figures);
  const auto history = recorder.history();
  BOOST_REQUIRE(history.nodes.size() == 1u);
  BOOST_TEST(history.nodes[0].bytes_sent == 1000u);
  BOOST_TEST(history.nodes[0].bytes_received == 3000u);
}

BOOST_AUTO_TEST_CASE(the_recorder_marks_each_new_loss_and_restore_once) {
  run_recorder recorder;
  strom::actors::job_metrics figures;
  recorder.job(figures);
  figures.report.nodes_lost = 1;
  recorder.job(figures);
  recorder.job(figures);  // the same count again: no new event
  figures.report.nodes_restored = 1;
  recorder.job(figures);
  const auto history = recorder.history();
  BOOST_REQUIRE(history.membership.size() == 2u);
  BOOST_TEST(history.membership[0].kind == "lost");
  BOOST_TEST(history.membership[1].kind == "restored");
}

BOOST_AUTO_TEST_CASE(the_page_is_self_contained_and_data_cannot_end_its_script) {
  auto data = read_ok(two_epochs);
  data.job = "</script><script>alert(1)</script>";
  const auto page = render_html_report(data);
  BOOST_TEST(page.find("<script>alert") == std::string::npos);
  BOOST_TEST(page.find("uPlot") != std::string::npos);
  BOOST_TEST(page.find(" src=") == std::string::npos);
  BOOST_TEST(page.find("<link") == std::string::npos);
  // The only URL is the library's home in its licence banner: nothing the page would fetch.
  const std::regex url{"https?://[^\\s\"')]*"};
  for (auto it = std::sregex_iterator(page.begin(), page.end(), url); it != std::sregex_iterator();
       ++it)
    BOOST_TEST(it->str() == "https://github.com/leeoniya/uPlot");
}
