#define BOOST_TEST_MODULE process_pipeline_processes
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include <csignal>

#include "cluster_processes.hpp"

// Pipeline training through the real `strom` program: a scheduler and worker processes, each
// running one stage of the network (`strom submit --mode pipeline --stages 2`), or one stage
// of one of two copies of the pipeline (`--pipelines 2`).

using namespace strom::test;

namespace {

/// A pipeline job through stage processes, up to 6 epochs; room for a loaded machine.
constexpr auto pipeline_job_limit = 300'000ms;

/// Where a stage is published: the worker (of the first `workers`) whose log says it runs the
/// stage `runs` names (e.g. "runs stage 1 of 2") at an address, and that log line.
struct published_stage {
  std::size_t worker = 0;
  std::string line;
};

/// Waits for the stage `runs` names to be published; empty when it never is.
published_stage wait_published(local_cluster& cluster, std::size_t workers,
                               const std::string& runs) {
  published_stage found;
  eventually([&] {
    for (found.worker = 0; found.worker < workers; ++found.worker) {
      const auto log = cluster.worker(found.worker).err();
      const auto at = log.find(runs);
      const auto line = at == std::string::npos ? "" : log.substr(at, log.find('\n', at) - at);
      if (line.find(" at ") != std::string::npos) {
        found.line = line;
        return true;
      }
    }
    return false;
  }, pipeline_job_limit);
  return found;
}

} // namespace

BOOST_AUTO_TEST_CASE(two_worker_processes_train_the_mlp_as_a_two_stage_pipeline) {
  local_cluster cluster{2};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "pipeline", "--stages", "2",
                               "--epochs", "1", "--metrics-out", metrics.string()},
                              "submit");
  // While it trains, the second stage's node holds a connection to where the first stage's
  // node publishes its stage: the activations (hundreds of MB an epoch) go between the two,
  // not through the scheduler.
  const auto first = wait_published(cluster, 2, "runs stage 1 of 2");
  BOOST_REQUIRE_MESSAGE(!first.line.empty(), cluster.worker(0).err() << cluster.worker(1).err());
  BOOST_TEST(eventually([&] {
    return connected_to_port(cluster.worker(1 - first.worker).pid(), port_of(first.line));
  }, 30'000ms), first.line);
  const auto status = submit->wait(pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0, submit->transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(contains(json, "\"mode\":\"pipeline\""), json);
  BOOST_TEST(json_number(json, "stages") == 2.0, json);
  BOOST_TEST(json_number(json, "micro_batches") == 8.0, json);
  BOOST_TEST(json_number(json, "pipelines") == 1.0, json);
  BOOST_TEST(contains(json, "\"stage_layers\":[[0,"), json);
  BOOST_TEST(json_number(json, "activation_bytes") > 0.0, json);
  BOOST_TEST(json_number(json, "stage_restores") == 0.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.82, json);
}

BOOST_AUTO_TEST_CASE(four_worker_processes_train_two_copies_of_a_two_stage_pipeline) {
  // Pipeline x data parallelism: copy 1 on w1 and w2, copy 2 on w3 and w4; the copies of a
  // stage share their updates node to node.
  local_cluster cluster{4};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "pipeline", "--stages", "2",
                               "--pipelines", "2", "--epochs", "1", "--metrics-out",
                               metrics.string()},
                              "submit");
  // The first stage of copy 2 connects to where copy 1's first stage is published.
  const auto copy_1 = wait_published(cluster, 4, "runs stage 1 of 2 in copy 1 of 2");
  BOOST_REQUIRE_MESSAGE(!copy_1.line.empty(), submit->transcript());
  BOOST_TEST(eventually([&] {
    for (std::size_t w = 0; w < 4; ++w)
      if (w != copy_1.worker
          && contains(cluster.worker(w).err(), "runs stage 1 of 2 in copy 2 of 2"))
        return connected_to_port(cluster.worker(w).pid(), port_of(copy_1.line));
    return false;
  }, 30'000ms), copy_1.line);
  const auto status = submit->wait(pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0, submit->transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "stages") == 2.0, json);
  BOOST_TEST(json_number(json, "pipelines") == 2.0, json);
  BOOST_TEST(json_number(json, "nodes") == 4.0, json);
  BOOST_TEST(json_number(json, "train_samples") == 60000.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.80, json);
}

BOOST_AUTO_TEST_CASE(a_stage_killed_at_epoch_3_is_restored_on_the_spare_and_the_job_completes) {
  // w1 and w2 run the two stages, w3 is the spare (issue #20's fault bar). Six epochs: one
  // pipeline trains as one worker does, past 0.88 from the sixth on (0.891 measured; 0.880
  // after five).
  local_cluster cluster{3};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "pipeline", "--spares", "1",
                               "--epochs", "6", "--metrics-out", metrics.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 3/6 done", pipeline_job_limit),
                        submit->transcript());
  cluster.worker(1).signal(SIGKILL);
  const auto status = submit->wait(pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value(), "the job did not end\n"
                                              << submit->transcript()
                                              << cluster.scheduler().transcript());
  BOOST_REQUIRE_MESSAGE(*status == 0, submit->transcript() << cluster.scheduler().transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "stage_restores") == 1.0, json);
  BOOST_TEST(json_number(json, "nodes_lost") == 1.0, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.88, json);
  BOOST_TEST(json_number(json, "epochs") == 6.0, json);
  const auto log = cluster.scheduler().err();
  BOOST_TEST(contains(log, "restores it on node"), log);
  BOOST_TEST(cluster.worker(2).err().find("runs stage") != std::string::npos,
             cluster.worker(2).err());
}

BOOST_AUTO_TEST_CASE(a_hung_first_stage_without_a_spare_is_merged_into_its_neighbours_node) {
  // The node of the first stage stops (SIGSTOP): lost after the heartbeat timeout, its stage
  // goes to the other node (the first stage has no neighbour before it: this once crashed the
  // scheduler). No re-partitioning: a loaded machine's measured speeds can drift, and a new
  // split could move the first stage after the test picked its node.
  local_cluster cluster{2, {"--heartbeat-timeout", "2000"}};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "pipeline", "--epochs", "3",
                               "--repartition-margin", "0", "--metrics-out", metrics.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/3 done", pipeline_job_limit),
                        submit->transcript());
  const int first = contains(cluster.worker(0).err(), "runs stage 1 of 2") ? 0 : 1;
  BOOST_REQUIRE_MESSAGE(contains(cluster.worker(first).err(), "runs stage 1 of 2"),
                        cluster.worker(first).err());
  auto& stopped = cluster.worker(first);
  stopped.signal(SIGSTOP);
  const auto status = submit->wait(pipeline_job_limit);
  stopped.signal(SIGCONT);  // it comes back to find itself dropped
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0,
                        submit->transcript() << cluster.scheduler().transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "stage_restores") == 1.0, json);
  BOOST_TEST(json_number(json, "nodes_lost") == 1.0, json);
  BOOST_TEST(json_number(json, "failure_detection_seconds") >= 2.0, json);
  // The timeout, plus up to a ping interval before it and one after it until the monitor
  // checks (0.5 s each at this timeout), plus the scheduling of a loaded machine (3.001 s seen).
  BOOST_TEST(json_number(json, "failure_detection_seconds") <= 3.5, json);
  BOOST_TEST(json_number(json, "train_samples") == 3.0 * 60000, json);
  BOOST_TEST(contains(cluster.scheduler().err(), "merged beside its neighbour"),
             cluster.scheduler().err());
  BOOST_TEST(contains(cluster.worker(1 - first).err(), "also runs stage 1"),
             cluster.worker(1 - first).err());
  const auto resumed = stopped.wait(pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(resumed.has_value(), stopped.transcript());
  BOOST_TEST(contains(stopped.err(), "dropped by the scheduler"), stopped.err());
}

BOOST_AUTO_TEST_CASE(a_lost_node_that_ran_both_stages_starts_the_job_again_from_its_checkpoint) {
  // #40: w1 is killed and its stage merged beside its neighbour on w2, which then runs both
  // stages and holds the only copies of their snapshots. Killing w2 too leaves nothing to
  // restore from: with the scheduler's --state-dir the job starts again from its checkpoint
  // once w1 and w2 are back (both restarted under their names), and trains every sample once.
  // Its first stage put the network together for the store at each epoch's end: it resumes
  // after the epoch the client saw end, not from the start.
  scratch state;
  local_cluster cluster{2, {"--state-dir", (state.path() / "scheduler").string()}};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submit = cluster.start({"submit", fashion_mlp_job, "--mode", "pipeline", "--epochs", "3",
                               "--repartition-margin", "0", "--metrics-out", metrics.string()},
                              "submit");
  BOOST_REQUIRE_MESSAGE(submit->wait_for_log("epoch 1/3 done", pipeline_job_limit),
                        submit->transcript());
  cluster.worker(0).signal(SIGKILL);
  BOOST_REQUIRE_MESSAGE(cluster.scheduler().wait_for_log("merged beside its neighbour",
                                                            pipeline_job_limit),
                        cluster.scheduler().transcript());
  cluster.worker(1).signal(SIGKILL);
  cluster.start_worker("w1", "w1-again");
  cluster.start_worker("w2", "w2-again");
  const auto status = submit->wait(pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(status.has_value() && *status == 0,
                        submit->transcript() << cluster.scheduler().transcript());
  const auto json = read_text(metrics);
  BOOST_TEST(json_number(json, "job_restarts") == 1.0, json);
  BOOST_TEST(json_number(json, "nodes_lost") >= 2.0, json);
  BOOST_TEST(json_number(json, "epochs") == 3.0, json);
  BOOST_TEST(json_number(json, "train_samples") == 3.0 * 60000, json);
  BOOST_TEST(json_number(json, "test_accuracy") >= 0.84, json);
  const auto log = cluster.scheduler().err();
  BOOST_TEST(contains(log, "it starts again from its latest checkpoint (restart 1 of 3)"), log);
  BOOST_TEST(contains(log, "starts again from its checkpoint after epoch"), log);
  BOOST_TEST(contains(log, "(fashion_mlp) resumes at epoch"), log);
  // From the checkpoint after epoch 1 or 2, not the start: less than an epoch trained again.
  BOOST_TEST(json_number(json, "samples_redone") < 60000.0, json);
  // Each epoch once in the history: the epochs trained again replace the earlier records.
  for (const auto* epoch : {"{\"epoch\":1,", "{\"epoch\":2,", "{\"epoch\":3,"}) {
    const auto first = json.find(epoch);
    BOOST_TEST((first != std::string::npos && json.find(epoch, first + 1) == std::string::npos),
               epoch << " in " << json);
  }
}
