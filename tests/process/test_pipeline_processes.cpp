#define BOOST_TEST_MODULE process_pipeline_processes
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "cluster_processes.hpp"

// Pipeline training through the real `strom` program: a scheduler and two worker processes,
// each running one stage of the network (`strom submit --mode pipeline --stages 2`).

using namespace strom::test;

namespace {

/// One epoch of the example MLP through two stage processes; room for a loaded machine.
constexpr auto pipeline_job_limit = 300'000ms;

} // namespace

BOOST_AUTO_TEST_CASE(two_worker_processes_train_the_mlp_as_a_two_stage_pipeline) {
  local_cluster cluster{2};
  const auto metrics = cluster.dir().path() / "metrics.json";
  auto submitted = cluster.command({"submit", fashion_mlp_job, "--mode", "pipeline", "--stages",
                                    "2", "--epochs", "1", "--metrics-out", metrics.string()},
                                   "submit", pipeline_job_limit);
  BOOST_REQUIRE_MESSAGE(submitted.status == 0, submitted.err);
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

BOOST_AUTO_TEST_CASE(more_pipelines_than_one_are_refused_as_not_built) {
  scratch dir;  // refused before any connection: no scheduler needed
  auto submitted = run_strom({"submit", fashion_mlp_job, "--mode", "pipeline", "--pipelines",
                              "2", "--to", "127.0.0.1:1"},
                             dir.path(), "submit", 30'000ms);
  BOOST_TEST(submitted.status != 0);
  BOOST_TEST(contains(submitted.err, "not built yet"), submitted.err);
}
