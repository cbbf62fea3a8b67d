#define BOOST_TEST_MODULE process_cluster_accuracy_soak
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "cluster_processes.hpp"

// Acceptance: ten epochs of the example MLP on a scheduler and two worker processes reach the
// accuracy of one worker training alone (`strom train --workers 1`), within half a point.

using namespace strom::test;

namespace {

/// Ten epochs on a busy 2-core machine, data loading and evaluation included.
constexpr auto ten_epoch_limit = 600'000ms;

/// The acceptance bar: 0.5 percentage points.
constexpr double accuracy_tolerance = 0.005;

} // namespace

BOOST_AUTO_TEST_CASE(two_worker_processes_match_one_worker_after_ten_epochs) {
  local_cluster cluster{2};
  const auto cluster_metrics = cluster.dir().path() / "cluster.json";
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--epochs", "10", "--metrics-out",
                                    cluster_metrics.string()},
                                   "submit", ten_epoch_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err);

  const auto single_metrics = cluster.dir().path() / "single.json";
  auto trained = run_strom({"train", fashion_mlp_job, "--workers", "1", "--epochs", "10",
                            "--metrics-out", single_metrics.string(), "--checkpoint-dir",
                            (cluster.dir().path() / "ckpt").string()},
                           cluster.dir().path(), "train", ten_epoch_limit);
  BOOST_REQUIRE_MESSAGE(trained.status == 0, trained.err);

  const auto cluster_json = read_text(cluster_metrics);
  const auto single_json = read_text(single_metrics);
  const double on_cluster = json_number(cluster_json, "test_accuracy");
  const double alone = json_number(single_json, "test_accuracy");
  const double bytes_ratio = json_number(cluster_json, "bytes_sent")
                             / json_number(cluster_json, "dense_bytes_equivalent");
  BOOST_TEST_MESSAGE("cluster " << on_cluster << ", one worker " << alone << ", bytes ratio "
                                << bytes_ratio);
  BOOST_TEST(std::abs(on_cluster - alone) <= accuracy_tolerance,
             "cluster " << on_cluster << " vs one worker " << alone);
  BOOST_TEST(bytes_ratio <= 0.01, cluster_json);
  BOOST_TEST(json_number(cluster_json, "duplicate_updates_applied") == 0.0, cluster_json);
}
