#define BOOST_TEST_MODULE process_mesh_processes
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "cluster_processes.hpp"

// The mesh topology through the real `strom` program: in-process clusters of `strom train
// --nodes K`, and `strom node --join` worker processes whose relays connect to each other
// through the ports they publish on their advertised address.

using namespace strom::test;

namespace {

/// The 12-node run below takes about 15 s alone on 2 cores; room for a loaded machine.
constexpr auto mesh_job_limit = 180'000ms;
/// A one-epoch job on a few nodes, and a command refused at once.
constexpr auto short_job_limit = 60'000ms;
constexpr auto refusal_limit = 10'000ms;

/// The metrics' "topology" object written as metrics_report.cpp writes it.
std::string topology_kind_json(const std::string& kind) {
  return "\"topology\":{\"kind\":\"" + kind + "\"";
}

} // namespace

// Issue 17's mesh acceptance run. Epochs: 5, not 2. With 12 workers each one sees 5000
// samples an epoch, and after 2 epochs the example job reaches only 83-84% whatever the
// topology (measured: plain 83.95% and 84.30%, mesh 83.03% and 83.85%); after 4, 85.55%
// plain and 85.23% mesh, too close to the bar; after 5, mesh 86.31% and 86.48% (about 15 s).
BOOST_AUTO_TEST_CASE(twelve_in_process_nodes_in_a_mesh_of_fanout_3_train_to_the_bar) {
  scratch dir;
  const auto metrics = dir.path() / "metrics.json";
  const auto started = std::chrono::steady_clock::now();
  auto train = run_strom({"train", fashion_mlp_job, "--nodes", "12", "--topology", "mesh",
                          "--fanout", "3", "--epochs", "5", "--metrics-out", metrics.string(),
                          "--checkpoint-dir", dir.path().string()},
                         dir.path(), "train", mesh_job_limit);
  BOOST_TEST_MESSAGE("12-node mesh, 5 epochs: "
                     << std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                          .count()
                     << " s");
  BOOST_REQUIRE_MESSAGE(train.status == 0, train.err);
  const auto json = read_text(metrics);
  BOOST_TEST(contains(json, topology_kind_json("mesh")), json);
  BOOST_TEST(json_number(json, "fanout") == 3.0, json);
  // Tree 0 -> {1,2,3}, 1 -> {4,5,6}, ...: an inner node has a parent and three children.
  BOOST_TEST(json_number(json, "max_links") <= 4.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.85, json);
  BOOST_TEST(json_number(json, "duplicate_updates_applied") == 0.0, json);
  BOOST_TEST(json_number(json, "duplicate_updates_dropped") == 0.0, json);
}

BOOST_AUTO_TEST_CASE(two_in_process_nodes_still_train_plain_through_the_hub) {
  scratch dir;
  const auto metrics = dir.path() / "metrics.json";
  auto train = run_strom({"train", fashion_mlp_job, "--nodes", "2", "--epochs", "1",
                          "--metrics-out", metrics.string(), "--checkpoint-dir",
                          dir.path().string()},
                         dir.path(), "train", short_job_limit);
  BOOST_REQUIRE_MESSAGE(train.status == 0, train.err);
  const auto json = read_text(metrics);
  BOOST_TEST(contains(json, topology_kind_json("plain")), json);
  BOOST_TEST(json_number(json, "max_links") == 2.0, json);  // the hub sends to both nodes
  BOOST_TEST(json_number(json, "duplicate_updates_applied") == 0.0, json);
}

BOOST_AUTO_TEST_CASE(a_zero_fanout_flag_is_refused_naming_it) {
  scratch dir;
  auto train = run_strom({"train", fashion_mlp_job, "--nodes", "2", "--fanout", "0"},
                         dir.path(), "train", refusal_limit);
  BOOST_TEST(train.status == 2);
  BOOST_TEST(contains(train.err, "strom train: --fanout: 0 is outside [1, 1024]"), train.err);
}

BOOST_AUTO_TEST_CASE(an_unknown_topology_flag_is_refused_naming_it) {
  scratch dir;
  auto submit = run_strom({"submit", fashion_mlp_job, "--to", "127.0.0.1:1", "--topology",
                           "star"},
                          dir.path(), "submit", refusal_limit);
  BOOST_TEST(submit.status == 2);
  BOOST_TEST(contains(submit.err, "--topology: topology 'star' is not plain, mesh or auto"),
             submit.err);
}

BOOST_AUTO_TEST_CASE(worker_processes_train_a_mesh_through_their_published_relays) {
  local_cluster cluster{3};
  const auto metrics = cluster.dir().path() / "metrics.json";
  // Fanout 1: a chain w1 -> w2 -> w3, so w1's frames reach w3 only through w2's relay.
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--epochs", "1", "--topology",
                                    "mesh", "--fanout", "1", "--metrics-out", metrics.string()},
                                   "submit", short_job_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err << cluster.scheduler().transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(contains(json, topology_kind_json("mesh")), json);
  BOOST_TEST(json_number(json, "max_links") == 2.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.80, json);
  // Every frame reached every worker once: 3 workers x 313 batches of 64 (20000 samples
  // each), applied at each of the 3 (a worker counts its own).
  BOOST_TEST(json_number(json, "updates_applied") == 3.0 * 313 * 3, json);
  BOOST_TEST(json_number(json, "duplicate_updates_applied") == 0.0, json);
  // Status shows each parent and its children by node id.
  auto listed = cluster.command({"status"}, "status", refusal_limit);
  BOOST_TEST(contains(listed.out, "relays: mesh, fanout 1: 1 > 2; 2 > 3"), listed.out);
}

BOOST_AUTO_TEST_CASE(a_mesh_job_goes_on_when_the_chains_middle_worker_is_killed) {
  local_cluster cluster{3};
  const auto metrics_path = cluster.dir().path() / "metrics.json";
  // Fanout 1: a chain w1 -> w2 -> w3; w2's loss cuts w3 off until it is re-attached.
  auto submit = cluster.start({"submit", fashion_mlp_job, "--epochs", "2", "--topology", "mesh",
                               "--fanout", "1", "--metrics-out", metrics_path.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/2 done", mesh_job_limit),
                        submit->transcript());
  cluster.worker(1).signal(SIGKILL);
  const auto status = submit->wait(mesh_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), submit->transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, submit->transcript() << cluster.scheduler().transcript());
  const auto metrics = read_text(metrics_path);
  BOOST_TEST(json_number(metrics, "nodes_lost") == 1.0, metrics);
  BOOST_TEST(json_number(metrics, "duplicate_updates_applied") == 0.0, metrics);
  BOOST_TEST(json_number(metrics, "train_samples") >= 0.99 * 2 * 60000, metrics);
  BOOST_TEST(json_number(metrics, "test_accuracy") >= 0.80, metrics);
  BOOST_TEST(contains(cluster.scheduler().err(), "re-wired its mesh without node 2"),
             cluster.scheduler().err());
}
