#define BOOST_TEST_MODULE runtime_node_capacity
#include <boost/test/unit_test.hpp>

#include <vector>

#include "strom/runtime/cluster_training.hpp"
#include "strom/runtime/in_process_cluster.hpp"
#include "strom/runtime/job_client.hpp"
#include "strom/runtime/local_training.hpp"
#include "strom/runtime/job_spec.hpp"

using namespace strom;

namespace {

/// The small job (support/small_fashion_job.hpp) with a hidden layer of 512 units: wide
/// enough that computing, which the speed factor slows, is most of a step rather than
/// messaging, which it does not slow. Synchronous: every step waits for the slowest node.
runtime::job_spec wide_fashion_job() {
  const std::string dir = STROM_FASHION_MNIST_DIR;
  const std::string text = R"((
  name = "fashion_wide",
  network = (
    input = (channels = 1, height = 28, width = 28),
    weightInit = he,
    layers = [(dense = (units = 512, activation = relu)), (output = (units = 10, weightInit = xavier))]
  ),
  data = (
    train = (idx = (images = ")" + dir + R"(/train-images-idx3-ubyte.gz",
                    labels = ")" + dir + R"(/train-labels-idx1-ubyte.gz")),
    test = (idx = (images = ")" + dir + R"(/t10k-images-idx3-ubyte.gz",
                   labels = ")" + dir + R"(/t10k-labels-idx1-ubyte.gz")),
    preprocessing = (scale = 0.00392156862745098)
  ),
  distributed = (staleness = 0),
  training = (epochs = 1, batchSize = 64, seed = 42, updater = (learningRate = 0.05, sgd = void))
))";
  auto job = runtime::parse_job_text(text, "fashion_wide.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

/// Samples per second of one epoch of the wide job on 2 in-process nodes of `speeds`.
double samples_per_second(std::vector<double> speeds) {
  auto job = wide_fashion_job();
  runtime::cluster_shape shape{2, 1};
  shape.node_speeds = std::move(speeds);
  auto run = runtime::train_on_cluster(job, {}, shape);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  BOOST_TEST(run->test_accuracy > 0.7);  // slowed, not broken
  return run->train_samples_per_second;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_node_at_half_speed_slows_a_synchronous_job) {
  const double full = samples_per_second({1.0, 1.0});
  const double half = samples_per_second({1.0, 0.5});
  BOOST_TEST_MESSAGE("samples/s: speeds 1,1 " << full << ", speeds 1,0.5 " << half);
  // Computing is most of a step: at half speed a step takes nearly twice as long. The bar
  // leaves room for the messaging a slow node does not slow, and for a loaded machine.
  BOOST_TEST(full > 1.3 * half);
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
