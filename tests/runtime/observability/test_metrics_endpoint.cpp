#define BOOST_TEST_MODULE runtime_metrics_endpoint
#include <boost/test/unit_test.hpp>

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

BOOST_AUTO_TEST_CASE(metrics_of_a_two_node_run_match_its_report) {
  auto watching = serve_metrics();
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = 1;
  options.watch = watching->hooks();
  auto report = runtime::train_on_cluster(job, options, {2, 1});
  BOOST_REQUIRE_MESSAGE(report, (report ? "" : report.err().message));

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
  BOOST_TEST(job_value(*exposition, "strom_nodes_alive") == 2.0);
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
