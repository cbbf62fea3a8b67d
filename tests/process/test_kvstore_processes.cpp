#define BOOST_TEST_MODULE process_kvstore_processes
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>

#include "cluster_processes.hpp"

// Parameter servers through the real `strom` program: a scheduler, server nodes (`strom node
// --role server`) and worker nodes as separate processes; `strom submit --mode kvstore`.

using namespace strom::test;

namespace {

/// Two epochs of the example MLP through two servers; room for a loaded machine.
constexpr auto kvstore_job_limit = 300'000ms;
constexpr auto refusal_limit = 30'000ms;

} // namespace

BOOST_AUTO_TEST_CASE(two_workers_push_to_two_server_processes_and_learn) {
  local_cluster cluster{2};
  cluster.add_server("s1");
  cluster.add_server("s2");
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--mode", "kvstore", "--epochs",
                                    "2", "--metrics-out", metrics.string()},
                                   "submit", kvstore_job_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err);
  const auto json = read_text(metrics);
  BOOST_TEST(contains(json, "\"mode\":\"kvstore\""), json);
  BOOST_TEST(contains(json, "\"kvstore\":\"dist_sync\""), json);
  BOOST_TEST(json_number(json, "servers") == 2.0, json);
  BOOST_TEST(json_number(json, "workers") == 2.0, json);
  BOOST_TEST(json_number(json, "nodes") == 2.0, json);  // the workers' nodes
  BOOST_TEST(json_number(json, "server_updates") > 0.0, json);
  BOOST_TEST(json_number(json, "push_bytes") >= json_number(json, "push_dense_bytes"), json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.85, json);
}

BOOST_AUTO_TEST_CASE(a_kvstore_job_without_a_server_node_is_refused_naming_the_role) {
  local_cluster cluster{1};
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--mode", "kvstore"}, "submit",
                                   refusal_limit);
  BOOST_TEST(submitted.status == 1);
  BOOST_TEST(contains(submitted.err, "needs 1 server nodes, 0 joined"), submitted.err);
}

BOOST_AUTO_TEST_CASE(a_server_killed_mid_job_fails_it_naming_the_server_without_a_replica) {
  local_cluster cluster{1};
  auto& server = cluster.add_server("s1");
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "kvstore", "--epochs", "10"},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/10", kvstore_job_limit),
                        submit->transcript());
  server.signal(SIGKILL);
  const auto status = submit->wait(kvstore_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), submit->transcript());
  BOOST_TEST(*status == 1);
  BOOST_TEST(contains(submit->err(), "parameter server node"), submit->err());
  BOOST_TEST(contains(submit->err(), "no replica"), submit->err());
}

BOOST_AUTO_TEST_CASE(with_two_replicas_a_server_killed_mid_job_fails_over_and_the_job_completes) {
  // Every key range on both servers; s1 is killed with -9 once the first epoch ended. The job
  // goes on on the replicas, and every range commits each dist_sync step once: none twice,
  // none lost.
  local_cluster cluster{2};
  auto& doomed = cluster.add_server("s1");
  cluster.add_server("s2");
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "kvstore", "--replicas",
                               "2", "--epochs", "2", "--metrics-out", metrics.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/2", kvstore_job_limit),
                        submit->transcript());
  doomed.signal(SIGKILL);
  const auto status = submit->wait(kvstore_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), submit->transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, submit->transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "replicas") == 2.0, json);
  BOOST_TEST(json_number(json, "server_failovers") == 1.0, json);
  BOOST_TEST(json_number(json, "train_samples") == 120000.0, json);
  // The MLP's 6 keys, 469 steps of each worker an epoch in lockstep (dist_sync), 2 epochs.
  BOOST_TEST(json_number(json, "server_updates") == 6.0 * 469 * 2, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.85, json);
}

BOOST_AUTO_TEST_CASE(workers_connect_to_a_joined_server_once_it_heads_the_key_ranges) {
  // s1 is killed once epoch 1 ended and s3 joins: it takes a replica of every range. s2 is
  // killed once epoch 2 ended: s3 heads every range, and the workers connect to it directly
  // instead of reaching it through the scheduler.
  local_cluster cluster{2};
  auto& s1 = cluster.add_server("s1");
  auto& s2 = cluster.add_server("s2");
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "kvstore", "--replicas",
                               "2", "--epochs", "3", "--metrics-out", metrics.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/3", kvstore_job_limit),
                        submit->transcript());
  s1.signal(SIGKILL);
  auto& s3 = cluster.add_server("s3");
  BOOST_REQUIRE_MESSAGE(s3.wait_for_log("key ranges of job", kvstore_job_limit), s3.transcript());
  const auto log = s3.err();
  const auto at = log.find("key ranges of job");
  const auto line = log.substr(at, log.find('\n', at) - at);
  BOOST_REQUIRE_MESSAGE(line.find(" at ") != std::string::npos, line);
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 2/3", kvstore_job_limit),
                        submit->transcript());
  s2.signal(SIGKILL);
  for (std::size_t w = 0; w < 2; ++w)
    BOOST_TEST(eventually([&] {
      return connected_to_port(cluster.worker(w).pid(), port_of(line));
    }, 30'000ms), "w" << w << " to " << line << "\n" << cluster.worker(w).err());
  const auto status = submit->wait(kvstore_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0, submit->transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "server_failovers") == 2.0, json);
  BOOST_TEST(json_number(json, "train_samples") == 180000.0, json);
}

BOOST_AUTO_TEST_CASE(a_kvstore_job_resumes_on_its_servers_after_the_schedulers_restart) {
  // #40: a restarted scheduler resumed a kvstore job on its workers alone (its servers were
  // not kept in its record), and every worker refused a job without servers. The job now
  // resumes from its checkpoint on the workers and the servers that joined again.
  strom::test::scratch state;
  local_cluster cluster{2, {"--state-dir", (state.path() / "scheduler").string()}};
  cluster.add_server("s1");
  cluster.add_server("s2");
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "kvstore", "--replicas",
                               "2", "--epochs", "2", "--metrics-out", metrics.string()},
                              "submit");
  // Killed once epoch 2 trains: its checkpoint was saved and recorded before it started.
  BOOST_REQUIRE_MESSAGE(
    cluster.scheduler().wait_for_log("checkpointed after epoch 1", kvstore_job_limit),
    cluster.scheduler().transcript());
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 2/2 step", kvstore_job_limit),
                        submit->transcript());
  cluster.scheduler().signal(SIGKILL);
  BOOST_REQUIRE(cluster.scheduler().wait(refusal_limit).has_value());
  auto& restarted = cluster.restart_scheduler("scheduler_again");
  const auto status = submit->wait(kvstore_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0,
                        submit->transcript() << restarted.transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "scheduler_restarts") == 1.0, json);
  BOOST_TEST(json_number(json, "epochs") == 2.0, json);
  BOOST_TEST(json_number(json, "train_samples") >= 120000.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.85, json);
  BOOST_TEST(contains(restarted.err(), "job 1 (fashion_mlp) resumes at epoch"), restarted.err());
}
