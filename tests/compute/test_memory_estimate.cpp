#define BOOST_TEST_MODULE compute_memory_estimate
#include <boost/test/unit_test.hpp>

#include <numeric>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/data/batch_loader.hpp"
#include "strom/compute/memory_estimate.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
// The estimate is held to the bytes the real objects allocate.
#include "support/allocation_recorder.hpp"
#include "support/spec_from_text.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

using job_text = testing::spec_from_text<schema::Job>;

/// Bytes allocated while `work` runs (freed ones included).
std::size_t bytes_during(auto&& work) { return test::allocations_during(work).bytes; }

constexpr std::uint32_t batch_size = 32;

// Every layer kind with a workspace, and Adam (two floats of state per parameter).
constexpr const char* small_cnn_job = R"((
  network = (input = (channels = 2, height = 12, width = 12), layers = [
    (convolution = (filters = 4, kernel = 3, padding = 1, activation = relu)),
    (batchNormalization = ()),
    (maxPooling = (kernel = 2)),
    (dropout = (rate = 0.25)),
    (dense = (units = 40, activation = tanh)),
    (output = (units = 5))]),
  training = (batchSize = 32, updater = (learningRate = 0.01, adam = ()))))";

/// Samples of the job's input shape, enough for a few batches.
dataset samples_for(const model& net) {
  dataset data;
  data.sample_shape = net.input_shape();
  data.classes = 5;
  data.features.assign(3 * batch_size * data.sample_shape.size(), 0.5f);
  data.labels.assign(3 * batch_size, 1);
  return data;
}

} // namespace

BOOST_AUTO_TEST_CASE(estimate_matches_what_a_worker_allocates) {
  job_text job{small_cnn_job};
  auto estimate = estimate_memory(job.reader, {1, true});
  BOOST_REQUIRE_MESSAGE(estimate.ok(), (estimate.ok() ? "" : estimate.err().message));

  std::unique_ptr<replica> worker;
  const auto replica_bytes =
    bytes_during([&] { worker = std::move(make_replica(job.reader, 0)).value(); });
  const auto parameters = worker->net().parameters().size();
  BOOST_TEST(estimate->parameters == parameters * sizeof(float));
  BOOST_TEST(estimate->updater_state == 2 * parameters * sizeof(float));
  BOOST_TEST(estimate->model_state == worker->net().state().size() * sizeof(float));

  const auto data = samples_for(worker->net());
  std::vector<std::uint32_t> order(data.size());
  std::iota(order.begin(), order.end(), 0u);
  std::unique_ptr<batch_loader> loader;
  std::unique_ptr<threshold_encoder> encoder;
  const auto feeding_bytes = bytes_during([&] {
    loader = std::make_unique<batch_loader>(data, order, batch_size);
    encoder = std::make_unique<threshold_encoder>(parameters, threshold_encoder_options{});
  });
  // The order is copied into the loader; it is data-set sized, not counted by the estimate.
  const auto counted = replica_bytes + feeding_bytes - order.size() * sizeof(std::uint32_t);
  const auto estimated = estimate->total();
  BOOST_TEST_MESSAGE("estimated " << estimated << " bytes, allocated " << counted);
  // Never less than the real buffers; the rest is the objects around them (layer objects,
  // vectors of slices, the updater), a few kB.
  BOOST_TEST(counted >= estimated);
  BOOST_TEST(counted - estimated < 8u * 1024u);
}

BOOST_AUTO_TEST_CASE(batch_part_grows_with_the_batch_and_workers_multiply_the_total) {
  job_text job{small_cnn_job};
  auto one = estimate_memory(job.reader, {1, false});
  auto three = estimate_memory(job.reader, {3, false});
  BOOST_REQUIRE(one.ok());
  BOOST_REQUIRE(three.ok());
  BOOST_TEST(one->sharing == 0u);
  BOOST_TEST(three->total() == 3 * one->total());
  BOOST_TEST(one->batch_size == batch_size);
}

BOOST_AUTO_TEST_CASE(updater_state_follows_the_updater) {
  job_text sgd{R"((network = (input = (width = 10), layers = [(output = (units = 2))]),
                   training = (updater = (sgd = void))))"};
  job_text momentum{R"((network = (input = (width = 10), layers = [(output = (units = 2))]),
                        training = (updater = (momentum = ()))))"};
  auto plain = estimate_memory(sgd.reader, {});
  auto with_velocity = estimate_memory(momentum.reader, {});
  BOOST_REQUIRE(plain.ok());
  BOOST_REQUIRE(with_velocity.ok());
  BOOST_TEST(plain->updater_state == 0u);
  BOOST_TEST(with_velocity->updater_state == with_velocity->parameters);
}

BOOST_AUTO_TEST_CASE(two_dense_layers_of_40000_units_need_gigabytes_and_the_message_says_so) {
  job_text job{R"((network = (input = (height = 28, width = 28), layers = [
      (dense = (units = 40000)), (dense = (units = 40000)), (output = (units = 10))]),
      training = (updater = (adam = ()))))"};
  auto estimate = estimate_memory(job.reader, {});
  BOOST_REQUIRE(estimate.ok());
  BOOST_TEST(estimate->total() > 25'000'000'000u);
  const auto text = to_string(*estimate);
  BOOST_TEST(text.find("about 26.1 GB (parameters 6.5 GB, gradients 6.5 GB, updater state 13.1 GB")
               == 0u, text);
}

BOOST_AUTO_TEST_CASE(an_invalid_job_is_not_estimated) {
  job_text job{R"((network = (input = (width = 10), layers = [(output = (units = 2))]),
                   training = (batchSize = 0)))"};
  auto estimate = estimate_memory(job.reader, {});
  BOOST_REQUIRE(!estimate.ok());
  BOOST_TEST(estimate.err().message.find("training.batchSize: 0") != std::string::npos,
             estimate.err().message);
}

BOOST_AUTO_TEST_CASE(estimating_a_huge_network_allocates_little) {
  // 2^28 channels of batch normalization: estimating must not allocate the layer's
  // per-channel statistics (2 GiB) the way building the model would.
  job_text job{R"((network = (input = (channels = 268435456), layers = [
      (batchNormalization = ()), (output = (units = 2))])))"};
  result<memory_estimate> estimate = error{"not run"};
  const auto bytes = bytes_during([&] { estimate = estimate_memory(job.reader, {}); });
  BOOST_REQUIRE_MESSAGE(estimate.ok(), (estimate.ok() ? "" : estimate.err().message));
  BOOST_TEST(estimate->total() > 4'000'000'000u);
  BOOST_TEST(bytes < 64u * 1024u);
}

BOOST_AUTO_TEST_CASE(bytes_are_written_for_people) {
  BOOST_TEST(bytes_text(999) == "999 bytes");
  BOOST_TEST(bytes_text(1500) == "1.5 kB");
  BOOST_TEST(bytes_text(25'600'000'000) == "25.6 GB");
}
