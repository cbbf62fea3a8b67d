#define BOOST_TEST_MODULE compute_model
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "strom/compute/device/device_kind.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "support/spec_from_text.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

/// A Network spec from Cap'n Proto text, as a job file would hold it.
using network_spec = testing::spec_from_text<schema::Network>;

std::string build_error(const char* text) {
  network_spec spec{text};
  auto built = make_model(spec.reader, 1);
  BOOST_REQUIRE(!built.ok());
  return built.err().message;
}

// Average pooling: max pooling's kinks make finite differences through a whole network
// unreliable; its own gradient is checked in tests/layers.
constexpr const char* small_cnn = R"((
  input = (channels = 2, height = 6, width = 6),
  layers = [
    (convolution = (filters = 3, kernel = 3, padding = 1, activation = tanh)),
    (averagePooling = (kernel = 2)),
    (batchNormalization = ()),
    (dense = (units = 5, activation = sigmoid)),
    (output = (units = 4))
  ]))";

/// small_cnn, initialised from seed 3, for batches of `batch`.
std::unique_ptr<model> small_cnn_model(std::size_t batch) {
  network_spec spec{small_cnn};
  auto built = make_model(spec.reader, 1);
  BOOST_REQUIRE(built.ok());
  auto net = std::move(built).value();
  net->initialize(3);
  net->reserve(batch);
  return net;
}

/// `count` features drawn uniformly from [-1, 1) with `seed`.
std::vector<float> random_features(std::size_t count, std::uint64_t seed) {
  rng gen{seed};
  std::vector<float> features(count);
  for (auto& f : features)
    f = gen.uniform(-1.0f, 1.0f);
  return features;
}

} // namespace

BOOST_AUTO_TEST_CASE(layers_get_consecutive_slices_of_one_flat_buffer) {
  network_spec spec{small_cnn};
  auto built = make_model(spec.reader, 1);
  BOOST_REQUIRE(built.ok());
  auto& net = **built;
  std::size_t expected_offset = 0;
  for (const auto& slice : net.slices()) {
    BOOST_TEST(slice.parameter_offset == expected_offset);
    expected_offset += slice.parameter_count;
  }
  // conv 3*2*3*3+3, batch norm 2*3, dense 5*27+5, output 4*5+4
  BOOST_TEST(net.parameters().size() == 57u + 6u + 140u + 24u);
  BOOST_TEST(net.parameters().size() == expected_offset);
  BOOST_TEST(net.state().size() == 6u);  // running mean and variance of 3 channels
  BOOST_TEST(net.classes() == 4u);
}

BOOST_AUTO_TEST_CASE(equal_seeds_give_equal_initial_parameters) {
  network_spec spec{small_cnn};
  auto a = make_model(spec.reader, 1);
  auto b = make_model(spec.reader, 2);
  BOOST_REQUIRE(a.ok() && b.ok());
  (*a)->initialize(7);
  (*b)->initialize(7);
  auto pa = (*a)->parameters();
  auto pb = (*b)->parameters();
  BOOST_TEST(std::vector<float>(pa.begin(), pa.end()) == std::vector<float>(pb.begin(), pb.end()),
             boost::test_tools::per_element());
  (*b)->initialize(8);
  BOOST_TEST(!std::equal(pa.begin(), pa.end(), (*b)->parameters().begin()));
}

BOOST_AUTO_TEST_CASE(whole_model_gradient_matches_finite_differences) {
  constexpr std::size_t batch = 4;
  const auto built = small_cnn_model(batch);
  auto& net = *built;
  const auto features = random_features(batch * net.input_shape().size(), 11);
  const std::vector<std::int32_t> labels{0, 3, 1, 2};
  net.compute_gradients(features, labels, batch);
  const std::vector<float> analytic(net.gradients().begin(), net.gradients().end());

  // Batch norm in training mode updates running statistics on each forward: they do not
  // enter the loss, so re-running forward passes is harmless for the check.
  auto params = net.parameters();
  constexpr float eps = 1e-2f;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < params.size(); i += 7) {
    const float saved = params[i];
    params[i] = saved + eps;
    const double up = net.compute_gradients(features, labels, batch);
    params[i] = saved - eps;
    const double down = net.compute_gradients(features, labels, batch);
    params[i] = saved;
    const double numeric = (up - down) / (2.0 * eps);
    BOOST_TEST(std::abs(numeric - analytic[i]) <= 2e-3 + 2e-2 * std::abs(numeric),
               "parameter " << i << ": numeric " << numeric << " analytic " << analytic[i]);
    ++checked;
  }
  BOOST_TEST(checked > 25u);
}

BOOST_AUTO_TEST_CASE(backward_hands_on_each_layer_s_final_gradients_from_the_last_layer_down) {
  const auto built = small_cnn_model(4);
  auto& net = *built;
  const auto features = random_features(4 * net.input_shape().size(), 11);
  const std::vector<std::int32_t> labels{0, 3, 1, 2};
  const float loss = net.compute_gradients(features, labels, 4);
  const std::vector<float> whole(net.gradients().begin(), net.gradients().end());
  std::vector<std::size_t> offsets;
  const float hooked = net.compute_gradients(features, labels, 4, [&](std::size_t from) {
    offsets.push_back(from);
    // What is handed on is final: it equals the whole pass's gradients already.
    for (std::size_t i = from; i < whole.size(); ++i)
      BOOST_REQUIRE_EQUAL(net.gradients()[i], whole[i]);
  });
  BOOST_TEST(hooked == loss);
  std::vector<std::size_t> expected;  // one call a layer, the last layer's first
  for (std::size_t i = net.slices().size(); i-- > 0;)
    expected.push_back(net.slices()[i].parameter_offset);
  BOOST_TEST(offsets == expected, boost::test_tools::per_element());
  BOOST_TEST(offsets.back() == 0u);
}

BOOST_AUTO_TEST_CASE(a_replica_hands_on_gradients_with_their_l2_term_already_added) {
  auto job = runtime::parse_job_text(
    R"((network = (input = (width = 12), layers = [(dense = (units = 8, activation = relu)),
         (dense = (units = 6, activation = tanh)), (output = (units = 3))]),
        training = (batchSize = 4, updater = (learningRate = 0.1, sgd = void), l2 = 0.05)))",
    "test.job", ".");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  auto built = make_replica(job->reader(), 0);
  BOOST_REQUIRE(built.ok());
  auto& trainer = **built;
  const auto features = random_features(4 * 12, 5);
  const std::vector<std::int32_t> labels{0, 2, 1, 2};
  trainer.compute_gradients(features, labels, 4);
  const std::vector<float> whole(trainer.net().gradients().begin(),
                                 trainer.net().gradients().end());
  std::size_t calls = 0;
  trainer.compute_gradients(features, labels, 4, [&](std::size_t from) {
    ++calls;
    for (std::size_t i = from; i < whole.size(); ++i)
      BOOST_REQUIRE_EQUAL(trainer.net().gradients()[i], whole[i]);
  });
  BOOST_TEST(calls == trainer.net().layers().size());  // one a layer
  for (std::size_t i = 0; i < whole.size(); ++i)
    BOOST_REQUIRE_EQUAL(trainer.net().gradients()[i], whole[i]);
}

BOOST_AUTO_TEST_CASE(a_cuda_replica_where_cuda_cannot_run_is_refused_saying_why) {
  auto job = runtime::parse_job_text(
    R"((network = (input = (width = 12), layers = [(output = (units = 3))]),
        training = (batchSize = 4, device = cuda)))",
    "test.job", ".");
  BOOST_REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.err().message));
  const auto cuda = find_cuda();
  auto built = make_replica(job->reader(), 0);
  if (cuda.usable) {  // a GPU machine: the replica steps there
    BOOST_REQUIRE(built.ok());
    BOOST_TEST((*built)->device_name() == cuda.why);
    return;
  }
  BOOST_REQUIRE(!built.ok());
  BOOST_TEST(built.err().message == "training.device = cuda: " + cuda.why);
}

BOOST_AUTO_TEST_CASE(last_layer_must_be_output) {
  auto message = build_error(R"((input = (width = 4), layers = [(dense = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0]") != std::string::npos);
  BOOST_TEST(message.find("output") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(kernel_larger_than_input_names_the_layer_and_sizes) {
  auto message = build_error(R"((input = (height = 4, width = 4), layers = [
      (convolution = (filters = 2, kernel = 7)), (output = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0].convolution.kernel") != std::string::npos, message);
  BOOST_TEST(message.find("4x4") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(zero_units_and_bad_rates_are_refused) {
  BOOST_TEST(build_error(R"((input = (width = 4), layers = [(dense = (units = 0)),
      (output = (units = 3))]))").find("network.layers[0].dense.units") != std::string::npos);
  BOOST_TEST(build_error(R"((input = (width = 4), layers = [(dropout = (rate = 1.5)),
      (output = (units = 3))]))").find("dropout.rate: 1.5") != std::string::npos);
  BOOST_TEST(build_error(R"((input = (width = 0), layers = [(output = (units = 3))]))")
               .find("network.input") != std::string::npos);
  BOOST_TEST(build_error(R"((input = (width = 4), layers = [(output = (units = 1))]))")
               .find("output.units") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(input_whose_size_overflows_64_bits_is_refused) {
  auto message = build_error(R"((input = (channels = 4000000000, height = 4000000000,
      width = 4000000000), layers = [(output = (units = 3))]))");
  BOOST_TEST(message.find("network.input: 4000000000x4000000000x4000000000") != std::string::npos,
             message);
}

BOOST_AUTO_TEST_CASE(padded_kernel_whose_output_overflows_is_refused_before_building) {
  // On a 1x1 input a kernel of 2^31 with padding 2^31-1 gives 2^31 x 2^31 outputs a filter.
  auto message = build_error(R"((input = (width = 1), layers = [
      (averagePooling = (kernel = 2147483648, padding = 2147483647, stride = 1)),
      (output = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0].averagePooling.kernel: 2147483648") != std::string::npos,
             message);
  BOOST_TEST(message.find("more than the 268435456 floats supported") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(convolution_patch_larger_than_a_sample_is_refused) {
  auto message = build_error(R"((input = (channels = 1000, height = 4, width = 4), layers = [
      (convolution = (filters = 1, kernel = 20000, padding = 19999)),
      (output = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0].convolution.kernel") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(network_with_more_parameters_than_frames_can_index_is_refused) {
  // 100000 inputs x 100000 units: 10^10 weights.
  auto message = build_error(R"((input = (width = 100000), layers = [
      (dense = (units = 100000)), (output = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0]: the network has 10000100000 parameters") !=
               std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(parameters_of_a_layer_with_an_activation_count_towards_the_limit) {
  // The relu is a layer of its own after the dense one; the dense layer's 10^10 weights
  // must still be counted.
  auto message = build_error(R"((input = (width = 100000), layers = [
      (dense = (units = 100000, activation = relu)), (output = (units = 3))]))");
  BOOST_TEST(message.find("network.layers[0]: the network has 10000100000 parameters") !=
               std::string::npos, message);
}
