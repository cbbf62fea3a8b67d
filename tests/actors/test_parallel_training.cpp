#define BOOST_TEST_MODULE actors_parallel_training
#include <boost/test/unit_test.hpp>

#include <string>

#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/parallel_training.hpp"

using namespace strom;

namespace {

const std::string fashion_dir = STROM_FASHION_MNIST_DIR;

/// A small Fashion-MNIST MLP (784-64-10), two epochs of batches of 64.
runtime::job_spec small_fashion_job() {
  const std::string text = R"((
  name = "fashion_small",
  network = (
    input = (channels = 1, height = 28, width = 28),
    weightInit = he,
    layers = [(dense = (units = 64, activation = relu)), (output = (units = 10, weightInit = xavier))]
  ),
  data = (
    train = (idx = (images = ")" + fashion_dir + R"(/train-images-idx3-ubyte.gz",
                    labels = ")" + fashion_dir + R"(/train-labels-idx1-ubyte.gz")),
    test = (idx = (images = ")" + fashion_dir + R"(/t10k-images-idx3-ubyte.gz",
                   labels = ")" + fashion_dir + R"(/t10k-labels-idx1-ubyte.gz")),
    preprocessing = (scale = 0.00392156862745098)
  ),
  training = (epochs = 2, batchSize = 64, seed = 42, updater = (learningRate = 0.05, sgd = void))
))";
  auto job = runtime::parse_job_text(text, "fashion_small.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  return std::move(*job);
}

} // namespace

BOOST_AUTO_TEST_CASE(two_workers_sharing_encoded_updates_learn_fashion_mnist) {
  auto job = small_fashion_job();
  auto run = runtime::train_in_process(job, {}, 2);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  const auto& report = *run;
  const auto& sharing = *run;
  BOOST_TEST_MESSAGE("accuracy " << report.test_accuracy << ", bytes " << sharing.bytes_sent
                     << " of dense " << sharing.dense_bytes_equivalent << ", density "
                     << sharing.mean_density << ", threshold " << sharing.final_threshold
                     << ", applied " << sharing.updates_applied << ", samples/s "
                     << report.train_samples_per_second);
  BOOST_TEST(report.workers == 2u);
  BOOST_TEST(report.train_samples == 120000u);
  // Learning, far above chance (0.10). Not yet the single-worker accuracy (0.85): 10 runs
  // (two at a time) ended at thresholds 0.009-0.014 and accuracies 0.74-0.84. The gap comes
  // from trainers running unboundedly ahead of the frames they apply (stale updates); once
  // that is bounded this bar becomes "within 0.5 points of one worker".
  BOOST_TEST(report.test_accuracy >= 0.70);
  BOOST_TEST(sharing.bytes_sent > 0u);
  BOOST_TEST(sharing.bytes_sent * 10 < sharing.dense_bytes_equivalent);
  BOOST_TEST(sharing.updates_applied > 0u);
  BOOST_TEST(sharing.duplicate_updates_applied == 0u);
  BOOST_TEST(sharing.frames_rejected == 0u);
}

BOOST_AUTO_TEST_CASE(zero_workers_is_refused) {
  auto job = small_fashion_job();
  auto run = runtime::train_in_process(job, {}, 0);
  BOOST_REQUIRE(!run);
  BOOST_TEST(run.err().message.find("workers") != std::string::npos);
}
