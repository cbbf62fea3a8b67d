#define BOOST_TEST_MODULE runtime_cluster_accuracy_soak
#include <boost/test/unit_test.hpp>

// The acceptance bar for in-process clusters: examples/fashion_mlp.job at its full
// 10 epochs on 4 nodes (each its own actor system, over loopback) ends within 0.5
// percentage points of one worker training alone, sending at most 1% of the dense bytes.
// Minutes of training: labelled soak, CI skips it.

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/local_training.hpp"

using namespace strom;

namespace {

runtime::job_spec mlp_job() {
  auto job = runtime::load_job_file(STROM_SOURCE_DIR "/examples/fashion_mlp.job");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

} // namespace

BOOST_AUTO_TEST_CASE(four_nodes_match_one_worker_on_fashion_mlp) {
  auto alone_job = mlp_job();
  auto alone = runtime::train_on_cluster(alone_job, {}, {1, 1});
  BOOST_REQUIRE_MESSAGE(alone, (alone ? "" : alone.err().message));
  auto cluster_job = mlp_job();
  auto cluster = runtime::train_on_cluster(cluster_job, {}, {4, 1});
  BOOST_REQUIRE_MESSAGE(cluster, (cluster ? "" : cluster.err().message));
  BOOST_TEST_MESSAGE("one worker " << alone->test_accuracy << ", 4 nodes "
                     << cluster->test_accuracy << ", bytes " << cluster->bytes_sent << " of dense "
                     << cluster->dense_bytes_equivalent);
  BOOST_TEST(cluster->test_accuracy >= alone->test_accuracy - 0.005);
  BOOST_TEST(cluster->bytes_sent * 100 <= cluster->dense_bytes_equivalent);
  BOOST_TEST(cluster->duplicate_updates_applied == 0u);
}
