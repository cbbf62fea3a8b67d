#define BOOST_TEST_MODULE compute_layer_profile
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "strom/compute/data/idx_reader.hpp"
#include "strom/compute/partition/layer_profile.hpp"
#include "strom/compute/partition/stage_partition.hpp"
#include "strom/runtime/job/job_spec.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

/// The fashion MLP job (784-512-256-10, Adam) and the Fashion-MNIST test images.
struct fashion_mlp {
  runtime::job_spec job;
  dataset samples;

  fashion_mlp() : job(load()), samples(read()) {}

  static runtime::job_spec load() {
    auto job = runtime::load_job_file(STROM_SOURCE_DIR "/examples/fashion_mlp.job");
    BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
    return std::move(*job);
  }
  static dataset read() {
    const std::string dir = STROM_FASHION_MNIST_DIR;
    auto data = read_idx(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
    BOOST_REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.err().message));
    return std::move(*data);
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(the_fashion_mlp_profile_has_positive_times_and_the_layers_sizes) {
  fashion_mlp mlp;
  auto costs = profile_layers(mlp.job.reader(), mlp.samples, {3, steady_seconds});
  BOOST_REQUIRE_MESSAGE(costs.ok(), (costs.ok() ? "" : costs.err().message));
  // dense 512, relu, dense 256, relu, output 10: activations are layers of their own.
  BOOST_REQUIRE(costs->layers.size() == 5u);
  BOOST_TEST(costs->input_bytes_per_sample == 784u * 4u);
  const std::uint64_t inputs[] = {784, 512, 512, 256, 256};
  const std::uint64_t outputs[] = {512, 512, 256, 256, 10};
  const bool dense[] = {true, false, true, false, true};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& l = costs->layers[i];
    BOOST_TEST_MESSAGE("layer " << i << " " << l.kind << ": " << l.seconds_per_sample * 1e6
                                << " us/sample");
    BOOST_TEST(l.seconds_per_sample > 0.0, "layer " << i);
    BOOST_TEST(l.activation_bytes_per_sample == outputs[i] * 4u, "layer " << i);
    const std::uint64_t parameters = dense[i] ? (inputs[i] + 1) * outputs[i] : 0;
    BOOST_TEST(l.parameter_bytes == parameters * 4u, "layer " << i);
    BOOST_TEST(l.gradient_bytes == parameters * 4u, "layer " << i);
    BOOST_TEST(l.updater_state_bytes == parameters * 8u, "layer " << i);  // Adam: two moments
    BOOST_TEST(l.model_state_bytes == 0u);
  }
  // The first layer does 784 x 512 multiply-adds a sample, the output layer 256 x 10.
  BOOST_TEST(costs->layers[0].seconds_per_sample > costs->layers[4].seconds_per_sample);
}

BOOST_AUTO_TEST_CASE(the_profile_divides_each_layers_time_by_the_timed_samples) {
  // A clock that moves one second a reading: each forward and each backward takes 1 s.
  fashion_mlp mlp;
  double now = 0;
  auto ticking = [&] { return now += 1.0; };
  auto costs = profile_layers(mlp.job.reader(), mlp.samples, {2, ticking});
  BOOST_REQUIRE(costs.ok());
  for (const auto& l : costs->layers)
    BOOST_TEST(l.seconds_per_sample == 2.0 * 2.0 / (2.0 * 64.0));  // 2 s a batch, 2 batches
}

BOOST_AUTO_TEST_CASE(a_profile_at_a_micro_batchs_size_divides_by_its_samples) {
  // A pipeline's placer profiles at the micro-batch size: 8 samples a batch, not the job's 64.
  fashion_mlp mlp;
  double now = 0;
  auto ticking = [&] { return now += 1.0; };
  layer_profile_options options{2, ticking};
  options.batch_size = 8;
  auto costs = profile_layers(mlp.job.reader(), mlp.samples, options);
  BOOST_REQUIRE(costs.ok());
  for (const auto& l : costs->layers)
    BOOST_TEST(l.seconds_per_sample == 2.0 * 2.0 / (2.0 * 8.0));
  dataset few = mlp.samples;
  few.features.resize(5 * 784);
  few.labels.resize(5);
  const auto refused = profile_layers(mlp.job.reader(), few, options);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().message.find("5 samples, fewer than a batch of 8") != std::string::npos,
             refused.err().message);
}

BOOST_AUTO_TEST_CASE(the_mlp_with_adam_does_not_fit_two_nodes_of_4_mb_but_fits_two_of_7_mb) {
  // The numbers: with Adam the MLP needs about 8.2 MiB, its first layer 6.1 MiB.
  fashion_mlp mlp;
  auto costs = profile_layers(mlp.job.reader(), mlp.samples, {1, steady_seconds});
  BOOST_REQUIRE(costs.ok());
  stage_partition_options options;
  options.micro_batch_size = 16;
  options.micro_batches_in_flight = 2;
  const std::uint64_t mib = 1024 * 1024;
  const std::vector<stage_node> small{{"a", 1.0, 4 * mib}, {"b", 1.0, 4 * mib}};
  auto refused = partition_stages(*costs, small, options);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST_MESSAGE(refused.err().message);
  BOOST_TEST(refused.err().message.find("a 4.2 MB, b 4.2 MB") != std::string::npos);
  const std::vector<stage_node> seven{{"a", 1.0, 7 * mib}, {"b", 1.0, 7 * mib}};
  auto split = partition_stages(*costs, seven, options);
  BOOST_REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.err().message));
  // The first dense layer (6.4 MB with Adam) and at most its relu on the first node.
  BOOST_TEST(split->stages[0].end_layer <= 2u);
}

BOOST_AUTO_TEST_CASE(samples_of_another_shape_are_refused) {
  fashion_mlp mlp;
  dataset wrong;
  wrong.sample_shape = {1, 2, 2};
  wrong.features.assign(4 * 64, 0.0f);
  wrong.labels.assign(64, 0);
  auto costs = profile_layers(mlp.job.reader(), wrong, {1, steady_seconds});
  BOOST_REQUIRE(!costs.ok());
  BOOST_TEST(costs.err().message.find("samples have 4 floats each, network.input 784")
             != std::string::npos);
}
