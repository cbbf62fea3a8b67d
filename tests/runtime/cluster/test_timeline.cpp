#define BOOST_TEST_MODULE runtime_timeline
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/observability/observation.hpp"
#include "support/json_value.hpp"
#include "support/scratch_dir.hpp"
#include "support/small_fashion_job.hpp"

// --timeline: a run's Chrome trace holds every worker's spans and every relay's traffic.

using namespace strom;

namespace {

/// The trace of one epoch of the small job on two nodes of two workers each, parsed.
test::json_value trace_of_a_run(const test::scratch& dir) {
  runtime::observation_options observe;
  observe.timeline_path = (dir.path() / "timeline.json").string();
  auto watching = runtime::observation::start(observe);
  BOOST_REQUIRE_MESSAGE(watching, (watching ? "" : watching.err().message));
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = 1;
  options.watch = (*watching)->hooks();
  auto report = runtime::train_on_cluster(job, options, {2, 2});
  BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));
  auto written = (*watching)->finish();
  BOOST_REQUIRE_MESSAGE(written, (written ? "" : written.err().message));
  std::ifstream file{observe.timeline_path};
  std::stringstream text;
  text << file.rdbuf();
  return test::parse_json(text.str());  // throws on malformed JSON
}

} // namespace

BOOST_AUTO_TEST_CASE(a_runs_timeline_is_a_chrome_trace_of_every_workers_spans) {
  const test::scratch dir;
  const auto trace = trace_of_a_run(dir);
  BOOST_REQUIRE(trace.has("traceEvents"));
  const auto& events = trace.at("traceEvents").array();
  std::map<std::string, std::size_t> kinds;
  std::map<std::pair<double, double>, double> last_start;  // by (pid, tid)
  std::set<double> workers_with_steps;
  std::set<double> pids;
  for (const auto& event : events) {
    BOOST_REQUIRE(event.is_object());
    const auto& ph = event.at("ph").string();
    if (ph == "M")
      continue;
    const auto name = event.at("name").string();
    ++kinds[name];
    BOOST_REQUIRE(event.at("pid").is_number());
    BOOST_REQUIRE(event.at("tid").is_number());
    const auto thread = std::make_pair(event.at("pid").number(), event.at("tid").number());
    pids.insert(thread.first);
    const double ts = event.at("ts").number();
    const auto previous = last_start.find(thread);
    BOOST_TEST((previous == last_start.end() || previous->second <= ts),
               name << " at " << ts << " on " << thread.first << "/" << thread.second);
    last_start[thread] = ts;
    if (ph == "X") {
      BOOST_TEST(event.at("dur").number() >= 0.0);
      if (name == "forward_backward")
        workers_with_steps.insert(thread.first * 1000 + thread.second);
      if (name == "wait")
        BOOST_TEST(event.at("args").at("waiting_for_node").number() > 0.0);
    } else {
      BOOST_TEST(ph == "C");
      BOOST_TEST(event.at("args").has("bytes_received"));
    }
  }
  for (const auto* kind : {"batch", "forward_backward", "encode", "frame", "wait", "apply",
                           "relay_traffic"})
    BOOST_TEST(kinds[kind] > 0u, kind << " missing");
  BOOST_TEST(pids.size() == 2u);               // two nodes
  BOOST_TEST(workers_with_steps.size() == 4u);  // four workers stepped
}
