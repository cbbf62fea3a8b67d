#define BOOST_TEST_MODULE runtime_metrics_endpoint
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/observability/observation.hpp"
#include "support/http_get.hpp"
#include "support/loopback_socket.hpp"
#include "support/small_fashion_job.hpp"

using namespace strom;

namespace {

/// /metrics of an observation started on a free loopback port.
std::unique_ptr<runtime::observation> serve_metrics() {
  runtime::observation_options options;
  options.metrics_listen = runtime::endpoint{"127.0.0.1", 0};
  auto started = runtime::observation::start(options);
  BOOST_REQUIRE_MESSAGE(started, (started ? "" : started.err().message));
  BOOST_REQUIRE((*started)->metrics_port() != 0);
  return std::move(*started);
}

/// `name{...strom_job="1"...}` with the job's figures; fails the test when missing.
double job_value(const std::string& exposition, const std::string& name) {
  const auto value = test::metric_value(exposition, name, {"strom_job=\"1\""});
  BOOST_REQUIRE_MESSAGE(value, name << " missing in\n" << exposition);
  return *value;
}

} // namespace

/// /metrics as scraped when the first epoch ended, while the job runs on.
struct scrape_after_first_epoch : runtime::training_observer {
  std::uint16_t port = 0;
  std::optional<std::string> exposition;
  void on_epoch(const actors::epoch_summary& s) override {
    if (s.epoch == 1)
      exposition = test::http_get(port, "/metrics");
  }
};

/// Job 1's strom_job_state series of `state`: 1 for the state it is in, 0 for the others.
double in_state(const std::string& exposition, const std::string& state) {
  const auto value = test::metric_value(exposition, "strom_job_state",
                                        {"strom_job=\"1\"", "state=\"" + state + "\""});
  BOOST_REQUIRE_MESSAGE(value, "no strom_job_state of " << state << " in\n" << exposition);
  return *value;
}

BOOST_AUTO_TEST_CASE(metrics_of_a_two_node_run_match_its_report) {
  auto watching = serve_metrics();
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = 2;
  options.watch = watching->hooks();
  scrape_after_first_epoch mid_run;
  mid_run.port = watching->metrics_port();
  options.observer = &mid_run;
  auto report = runtime::train_on_cluster(job, options, {2, 1});
  BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));

  // #43: while the job runs, its counters move (rate() works) and its state is training.
  BOOST_REQUIRE(mid_run.exposition);
  const auto& during = *mid_run.exposition;
  BOOST_TEST(job_value(during, "strom_bytes_sent_total") > 0.0);
  BOOST_TEST(job_value(during, "strom_bytes_sent_total")
             < static_cast<double>(report->bytes_sent));
  BOOST_TEST(job_value(during, "strom_samples_trained_total") > 0.0);
  BOOST_TEST(job_value(during, "strom_nodes_alive") == 2.0);
  BOOST_TEST(in_state(during, "training") == 1.0);
  BOOST_TEST(in_state(during, "succeeded") == 0.0);

  const auto exposition = test::http_get(watching->metrics_port(), "/metrics");
  BOOST_REQUIRE(exposition);
  BOOST_TEST(job_value(*exposition, "strom_samples_trained_total") > 0.0);
  BOOST_TEST(job_value(*exposition, "strom_samples_trained_total")
             == static_cast<double>(report->train_samples));
  BOOST_TEST(job_value(*exposition, "strom_bytes_sent_total")
             == static_cast<double>(report->bytes_sent));
  BOOST_TEST(job_value(*exposition, "strom_frames_applied_total")
             == static_cast<double>(report->updates_applied));
  BOOST_TEST(job_value(*exposition, "strom_test_accuracy") == report->test_accuracy);
  // An ended job trains on no node.
  BOOST_TEST(job_value(*exposition, "strom_nodes_alive") == 0.0);
  BOOST_TEST(in_state(*exposition, "succeeded") == 1.0);
  BOOST_TEST(in_state(*exposition, "training") == 0.0);
  // Prometheus sets `job` on every target it scrapes; no figure is a placeholder.
  const auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (auto at = exposition->find(part); at != std::string::npos;
         at = exposition->find(part, at + 1))
      ++n;
    return n;
  };
  BOOST_TEST(count("job=\"") == count("strom_job=\""));
  BOOST_TEST(exposition->find(" -1\n") == std::string::npos);
  // Each node's own figures, and the scheduler's heartbeats to both.
  for (const auto* node : {"node-0", "node-1"}) {
    const auto sent =
      test::metric_value(*exposition, "strom_node_bytes_sent_total",
                         {"strom_job=\"1\"", std::string{"node=\""} + node + "\""});
    BOOST_REQUIRE_MESSAGE(sent, node << " has no bytes sent in\n" << *exposition);
    BOOST_TEST(*sent > 0.0);
    BOOST_TEST(test::metric_value(*exposition, "strom_heartbeat_rtt_seconds",
                                  {std::string{"node=\""} + node + "\""})
                 .has_value());
  }
}

BOOST_AUTO_TEST_CASE(a_busy_metrics_port_is_refused_naming_it) {
  std::uint16_t port = 0;
  const int busy = test::listen_loopback(1, port);
  runtime::observation_options options;
  options.metrics_listen = runtime::endpoint{"127.0.0.1", port};
  auto started = runtime::observation::start(options);
  ::close(busy);
  BOOST_REQUIRE(!started);
  BOOST_TEST(started.err().message.find("127.0.0.1:" + std::to_string(port))
             != std::string::npos);
}
