#define BOOST_TEST_MODULE compute_no_allocation
#include <boost/test/unit_test.hpp>

#include <vector>

#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

#include "support/allocation_recorder.hpp"

// Every allocation in this process is counted while recording: a training step after warm-up
// must reuse its workspaces and allocate nothing.

using namespace strom;

namespace {

/// Allocations `work` makes.
std::size_t allocations_during(auto&& work) {
  return test::allocations_during(work).count;
}

std::unique_ptr<compute::replica> replica_for(const char* network, const char* updater) {
  auto text = std::string{"(network = "} + network + ", training = (batchSize = 16, updater = ("
              + updater + "), l2 = 0.0001))";
  auto job = runtime::parse_job_text(text, "test.job", ".");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  auto built = compute::make_replica(job->reader(), 0);
  BOOST_REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : built.err().message));
  return std::move(built).value();
}

void check_steps_allocate_nothing(compute::replica& trainer) {
  const std::size_t width = trainer.net().input_shape().size();
  compute::rng gen{3};
  std::vector<float> features(16 * width);
  for (auto& f : features)
    f = gen.uniform(0.0f, 1.0f);
  std::vector<std::int32_t> labels(16);
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = static_cast<std::int32_t>(i % 3);
  trainer.train_step(features, labels, 16);  // warm-up
  const auto counted = test::allocations_during([&] {
    for (int i = 0; i < 10; ++i)
      trainer.train_step(features, labels, 16);
    trainer.train_step(std::span{features}.first(5 * width), std::span{labels}.first(5), 5);
  });
  BOOST_TEST(counted.count == 0u);
}

} // namespace

BOOST_AUTO_TEST_CASE(dense_network_step_with_adam_allocates_nothing) {
  auto trainer = replica_for(R"((input = (width = 20), layers = [
      (dense = (units = 32, activation = relu)), (dense = (units = 16, activation = tanh)),
      (output = (units = 3))]))", "learningRate = 0.01, adam = ()");
  check_steps_allocate_nothing(*trainer);
}

BOOST_AUTO_TEST_CASE(convolutional_network_step_allocates_nothing) {
  auto trainer = replica_for(R"((input = (channels = 1, height = 8, width = 8), layers = [
      (convolution = (filters = 4, kernel = 3, padding = 1, activation = relu)),
      (maxPooling = (kernel = 2)), (batchNormalization = ()),
      (convolution = (filters = 4, kernel = 3, activation = leakyRelu)),
      (averagePooling = (kernel = 2)), (dropout = (rate = 0.2)),
      (dense = (units = 8, activation = sigmoid)), (output = (units = 3))]))",
                             "learningRate = 0.01, nesterov = ()");
  check_steps_allocate_nothing(*trainer);
}

BOOST_AUTO_TEST_CASE(gradients_handed_on_layer_by_layer_allocate_nothing) {
  // A parameter server's worker pushes each layer's gradients as backward computes them
  // (model::gradients_ready): the replica's L2 wrapper around the hook must not allocate.
  auto trainer = replica_for(R"((input = (width = 20), layers = [
      (dense = (units = 32, activation = relu)), (output = (units = 3))]))",
                             "learningRate = 0.01, adam = ()");
  std::vector<float> features(16 * 20, 0.5f);
  std::vector<std::int32_t> labels(16, 1);
  std::size_t calls = 0;
  const compute::model::gradients_ready ready = [&calls](std::size_t) { ++calls; };
  trainer->compute_gradients(features, labels, 16, ready);  // warm-up
  const auto counted = test::allocations_during(
    [&] { trainer->compute_gradients(features, labels, 16, ready); });
  BOOST_TEST(counted.count == 0u);
  BOOST_TEST(calls == 2 * trainer->net().layers().size());
}

BOOST_AUTO_TEST_CASE(batch_loader_reuses_its_buffers) {
  compute::dataset data;
  data.sample_shape = {1, 1, 10};
  data.classes = 2;
  data.features.assign(1000 * 10, 0.5f);
  data.labels.assign(1000, 1);
  compute::batch_loader loader{data, compute::epoch_order({0, 1000}, 1, 0, true), 32};
  loader.next();  // warm-up: the first batch
  const auto counted = test::allocations_during([&] {
    while (loader.next() != nullptr) {
    }
  });
  BOOST_TEST(counted.count == 0u);
}

BOOST_AUTO_TEST_CASE(the_counter_sees_allocations) {
  std::vector<float>* escaped = nullptr;
  const auto counted = test::allocations_during([&] { escaped = new std::vector<float>(100); });
  delete escaped;
  BOOST_TEST(counted.count >= 2u);  // the vector object and its storage
}
