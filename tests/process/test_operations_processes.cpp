#define BOOST_TEST_MODULE process_operations_processes
#include <boost/test/unit_test.hpp>

#include "cluster_processes.hpp"
#include "support/http_get.hpp"
#include "support/small_fashion_job.hpp"

// What an operator watches on a cluster of real processes: the scheduler's /metrics and the
// stall watch in `strom status`.

using namespace strom::test;

namespace {

/// A short job on two single-trainer nodes.
constexpr auto short_job_limit = 60'000ms;
/// Clients answer at once.
constexpr auto client_limit = 10'000ms;
/// The stall warning of the stall case, and the time `strom status` has beyond it to name
/// the stopped worker (the bar).
constexpr auto stall_warning = 1'000ms;
constexpr auto naming_margin = 2'000ms;
/// Long enough that the stopped worker is never declared lost while the test runs.
constexpr const char* long_heartbeat_timeout_ms = "120000";

/// `strom status` until its output holds `text` or `limit` passed; the last output.
std::string status_until(local_cluster& cluster, const std::string& text,
                         std::chrono::milliseconds limit) {
  std::string out;
  eventually([&] {
    out = cluster.command({"status"}, "status", client_limit).out;
    return contains(out, text);
  }, limit);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_schedulers_metrics_list_the_jobs_samples_trained) {
  const auto port = closed_port();
  local_cluster cluster{2, {"--metrics-listen", "127.0.0.1:" + std::to_string(port)}};
  const auto metrics_path = cluster.dir().path() / "metrics.json";
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--epochs", "1", "--metrics-out",
                                    metrics_path.string()},
                                   "submit", short_job_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err);
  const auto report = read_text(metrics_path);
  const auto exposition = http_get(port, "/metrics");
  BOOST_REQUIRE_MESSAGE(exposition, cluster.scheduler().transcript());
  const auto samples =
    metric_value(*exposition, "strom_samples_trained_total", {"strom_job=\"1\""});
  BOOST_REQUIRE_MESSAGE(samples, *exposition);
  BOOST_TEST(*samples > 0.0);
  BOOST_TEST(*samples == json_number(report, "train_samples"));
  const auto sent = metric_value(*exposition, "strom_bytes_sent_total", {"strom_job=\"1\""});
  BOOST_REQUIRE(sent);
  BOOST_TEST(*sent == json_number(report, "bytes_sent"));
  BOOST_TEST(contains(*exposition, "strom_heartbeat_rtt_seconds{node=\"w1\"}"), *exposition);
}

// #43: `strom train --metrics-listen` keeps its endpoint for --metrics-linger after the run,
// for the last scrape: the job succeeded and trains on no node; Ctrl-C ends the wait.
BOOST_AUTO_TEST_CASE(train_serves_its_last_metrics_for_the_linger_after_the_run) {
  scratch dir;
  const auto job = dir.path() / "small.job";
  std::ofstream{job} << strom::testing::small_fashion_job_text();
  const auto port = closed_port();
  child train{{"train", job.string(), "--workers", "1", "--epochs", "1", "--metrics-listen",
               "127.0.0.1:" + std::to_string(port), "--metrics-linger", "2m"},
              dir.path(), "train"};
  BOOST_REQUIRE_MESSAGE(train.wait_for_log("(--metrics-linger)", short_job_limit),
                        train.transcript());
  const auto exposition = http_get(port, "/metrics");
  BOOST_REQUIRE_MESSAGE(exposition, train.transcript());
  const auto job_label = "strom_job=\"1\"";
  BOOST_TEST((metric_value(*exposition, "strom_job_state", {job_label, "state=\"succeeded\""})
              == 1.0), *exposition);
  BOOST_TEST((metric_value(*exposition, "strom_nodes_alive", {job_label}) == 0.0), *exposition);
  BOOST_TEST((metric_value(*exposition, "strom_samples_trained_total", {job_label}) == 60000.0),
             *exposition);
  train.signal(SIGINT);
  const auto status = train.wait(client_limit);
  BOOST_REQUIRE_MESSAGE(status, train.transcript());
  BOOST_TEST(*status == 0);
}

BOOST_AUTO_TEST_CASE(status_names_a_stopped_worker_as_the_one_the_others_wait_for) {
  local_cluster cluster{2, {"--heartbeat-timeout", long_heartbeat_timeout_ms, "--stall-warning",
                            std::to_string(stall_warning.count()) + "ms"}};
  auto submit = cluster.start({"submit", fashion_mlp_job, "--epochs", "20"}, "submit");
  BOOST_REQUIRE_MESSAGE(cluster.scheduler().wait_for_log("starts on 2 nodes", short_job_limit),
                        cluster.scheduler().transcript());
  std::this_thread::sleep_for(stall_warning);  // well into the first epoch
  auto& stopped = cluster.worker(1);
  stopped.signal(SIGSTOP);
  const auto stopped_at = std::chrono::steady_clock::now();
  const auto out = status_until(cluster, "stalled: waiting for node 2 (w2", stall_warning
                                                                            + naming_margin);
  const auto took = std::chrono::steady_clock::now() - stopped_at;
  stopped.signal(SIGCONT);
  BOOST_TEST_MESSAGE("named after " << std::chrono::duration<double>(took).count() << " s:\n"
                                     << out);
  BOOST_REQUIRE_MESSAGE(contains(out, "stalled: waiting for node 2 (w2"),
                        out << cluster.scheduler().transcript());
  BOOST_TEST(contains(out, "does not answer"), out);
  BOOST_TEST(took <= stall_warning + naming_margin);
  BOOST_TEST(cluster.scheduler().wait_for_log("stalls, waiting for node 2 (w2", client_limit),
             cluster.scheduler().transcript());
  // Resumed, it trains again: the verdict goes away; then the test ends the job.
  BOOST_TEST(eventually([&] {
    return !contains(cluster.command({"status"}, "status", client_limit).out, "stalled:");
  }, client_limit));
  auto cancelled = cluster.command({"cancel", "1"}, "cancel", client_limit);
  BOOST_TEST(cancelled.status == 0, cancelled.err);
  BOOST_TEST(submit->wait(client_limit).has_value(), submit->transcript());
}
