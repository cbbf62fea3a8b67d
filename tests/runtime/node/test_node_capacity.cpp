#define BOOST_TEST_MODULE runtime_node_capacity
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <vector>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/cluster/in_process_cluster.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "support/small_fashion_job.hpp"

using namespace strom;

namespace {

/// The small job's hidden layer here: wide enough that computing, which the speed factor
/// slows, is most of a step rather than messaging, which it does not slow.
constexpr unsigned hidden_units = 512;

/// Samples per second of one synchronous epoch of the widened small job on 2 in-process
/// nodes of `speeds`.
double samples_per_second(std::vector<double> speeds) {
  auto job = testing::small_fashion_job(STROM_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz",
                                        hidden_units);
  job.builder().getDistributed().setStaleness(0);  // every step waits for the slowest node
  runtime::cluster_shape shape{2, 1};
  for (double factor : speeds)
    shape.node_speeds.push_back({factor});
  runtime::local_training_options options;
  options.epochs = 1;
  auto run = runtime::train_on_cluster(job, options, shape);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  BOOST_TEST(run->test_accuracy > 0.7);  // slowed, not broken
  return run->train_samples_per_second;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_node_at_a_tenth_of_its_speed_slows_a_synchronous_job) {
  // Other work on a shared machine only ever slows a run: the best of alternating runs is
  // each setting's own speed (one run each measured 36k against 43k samples/s under load).
  double full = 0;
  double slowed = 0;
  for (int round = 0; round < 2; ++round) {
    full = std::max(full, samples_per_second({1.0, 1.0}));
    slowed = std::max(slowed, samples_per_second({1.0, 0.1}));
  }
  BOOST_TEST_MESSAGE("best samples/s: speeds 1,1 " << full << ", speeds 1,0.1 " << slowed);
  // Computing is most of a step: at a tenth of its speed a step takes up to ten times as
  // long. The ratio shrinks with the machine's load (a sleeping node leaves its core to the
  // other, and the full-speed runs share theirs): at 0.5 it measured 1.36-2.8x, at 0.25 once
  // 0.96x in a full suite run (31.3k against 30.2k samples/s); 0.1 keeps the bar clear.
  BOOST_TEST(full > 1.5 * slowed);
}

BOOST_AUTO_TEST_CASE(each_node_announces_its_memory_limit_and_status_shows_it) {
  runtime::cluster_shape shape{2, 1};
  shape.memory_limit = 7 * 1024 * 1024;
  auto cluster = runtime::in_process_cluster::start(shape);
  BOOST_REQUIRE_MESSAGE(cluster, (cluster ? "" : cluster.err().message));
  auto status = runtime::query_status((*cluster)->home(), (*cluster)->scheduler());
  BOOST_REQUIRE_MESSAGE(status, (status ? "" : status.err().message));
  BOOST_REQUIRE(status->nodes.size() == 2u);
  for (const auto& node : status->nodes)
    BOOST_TEST(node.memory_limit == 7u * 1024u * 1024u, node.name);
}
