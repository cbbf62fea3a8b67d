#define BOOST_TEST_MODULE runtime_parameter_averaging
#include <boost/test/unit_test.hpp>

#include "strom/runtime/cluster/cluster_training.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "support/small_fashion_job.hpp"

using namespace strom;

namespace {

/// Trains the small job for one epoch in averaging mode on a fresh in-process cluster.
runtime::training_report train_averaging(runtime::cluster_shape shape) {
  auto job = testing::small_fashion_job();
  runtime::local_training_options options;
  options.epochs = 1;
  options.mode = schema::TrainingMode::AVERAGING;
  options.averaging_frequency = 5;
  auto run = runtime::train_on_cluster(job, options, shape);
  BOOST_REQUIRE_MESSAGE(run, (run ? "" : run.err().message));
  BOOST_TEST_MESSAGE(shape.nodes << " nodes x " << shape.workers << " workers: accuracy "
                     << run->test_accuracy << ", averages " << run->averaging_rounds
                     << ", bytes " << run->averaging_bytes);
  return *run;
}

} // namespace

// 30000 samples a worker in batches of 64: 469 steps, averaged after every 5th (93 times) and
// after the last (469 is not a multiple of 5).
constexpr std::uint64_t averages_in_one_epoch = 94;

BOOST_AUTO_TEST_CASE(two_workers_of_one_node_average_and_learn) {
  const auto report = train_averaging({1, 2});
  BOOST_TEST(report.mode == "averaging");
  BOOST_TEST(report.averaging_frequency == 5u);
  BOOST_TEST(report.averaging_rounds == averages_in_one_epoch);
  BOOST_TEST(report.averaging_bytes == 0u);  // the node's sum never leaves it
  BOOST_TEST(report.train_samples == 60000u);
  BOOST_TEST(report.test_accuracy >= 0.78);
  BOOST_TEST(report.duplicate_updates_applied == 0u);
  BOOST_TEST(report.frames_rejected == 0u);
}

BOOST_AUTO_TEST_CASE(two_nodes_end_the_epoch_on_the_same_model_as_two_workers_of_one_node) {
  // Both workers contribute after their last step, so the model evaluated is the average of
  // the same two replicas, whichever transport carried them: the same to the last bit.
  const auto one_node = train_averaging({1, 2});
  const auto two_nodes = train_averaging({2, 1});
  BOOST_TEST(two_nodes.nodes == 2u);
  BOOST_TEST(two_nodes.averaging_rounds == averages_in_one_epoch);
  BOOST_TEST(two_nodes.averaging_bytes > 0u);
  BOOST_TEST(two_nodes.test_accuracy == one_node.test_accuracy);
  BOOST_TEST(two_nodes.test_loss == one_node.test_loss);
  BOOST_TEST(two_nodes.duplicate_updates_applied == 0u);
}

BOOST_AUTO_TEST_CASE(a_worker_alone_has_nobody_to_average_with) {
  const auto report = train_averaging({1, 1});
  BOOST_TEST(report.mode == "averaging");
  BOOST_TEST(report.averaging_rounds == 0u);
  BOOST_TEST(report.averaging_bytes == 0u);
  BOOST_TEST(report.test_accuracy >= 0.78);
}
