#define BOOST_TEST_MODULE layers_dense_columns
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dense_columns.hpp"
#include "strom/compute/pipeline/column_blocks.hpp"

// A dense layer split into blocks of output columns, chained as a pipeline runs them, computes
// what the whole layer computes: the same output, the same input gradient, and each block the
// gradient of its own rows of W and b.

using namespace strom::compute;
using strom::compute::testing::random_values;

namespace {

constexpr std::size_t batch = 3;
constexpr std::size_t inputs = 5;
constexpr std::size_t units = 7;

void check_close(std::span<const float> got, std::span<const float> want, const char* what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) <= 1e-5f + 1e-5f * std::abs(want[i]),
               what << " " << i << ": " << got[i] << " against " << want[i]);
}

} // namespace

BOOST_AUTO_TEST_CASE(blocks_of_columns_compute_the_whole_dense_layer) {
  rng gen{3};
  const auto x = random_values(batch * inputs, gen);
  const auto params = random_values(units * inputs + units, gen);
  const auto dout = random_values(batch * units, gen);
  // The whole layer.
  dense whole({inputs, 1, 1}, units, weight_init::xavier);
  auto whole_params = params;
  std::vector<float> whole_grads(params.size());
  whole.bind(whole_params, whole_grads, {});
  std::vector<float> want_out(batch * units);
  whole.forward(x, want_out, batch, pass::training);
  std::vector<float> want_din(batch * inputs);
  whole.backward(x, want_out, dout, want_din, batch);
  // Blocks [0, 2), [2, 3), [3, 7): each holds its rows of W and its biases.
  const std::vector<std::size_t> bounds{0, 2, 3, 7};
  std::vector<std::unique_ptr<dense_columns>> blocks;
  std::vector<std::vector<float>> block_params, block_grads, outputs, input_grads;
  std::vector<float> in = x;
  std::vector<std::vector<float>> inputs_of;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    auto block = std::make_unique<dense_columns>(inputs, units, bounds[k], bounds[k + 1],
                                                 weight_init::xavier);
    BOOST_TEST(block->kind() == "dense_columns");
    const auto columns = bounds[k + 1] - bounds[k];
    BOOST_TEST(block->parameter_count() == columns * (inputs + 1));
    BOOST_TEST(block->input_width() == inputs + bounds[k]);
    std::vector<float> p(params.begin() + bounds[k] * inputs,
                         params.begin() + bounds[k + 1] * inputs);
    p.insert(p.end(), params.begin() + units * inputs + bounds[k],
             params.begin() + units * inputs + bounds[k + 1]);
    block_params.push_back(std::move(p));
    block_grads.emplace_back(block_params.back().size());
    block->bind(block_params.back(), block_grads.back(), {});
    std::vector<float> out(batch * block->output_shape().size());
    block->forward(in, out, batch, pass::training);
    inputs_of.push_back(in);
    outputs.push_back(out);
    in = out;
    blocks.push_back(std::move(block));
  }
  BOOST_TEST(blocks.back()->last());
  BOOST_TEST(blocks.back()->output_shape().size() == units);
  check_close(outputs.back(), want_out, "output");
  // Backward from the last block to the first, each block's input gradient the previous
  // block's output gradient.
  std::vector<float> grad = dout;
  for (std::size_t k = blocks.size(); k-- > 0;) {
    std::vector<float> din(batch * blocks[k]->input_width());
    blocks[k]->backward(inputs_of[k], outputs[k], grad, din, batch);
    // Its rows of dW and its biases' gradients.
    std::vector<float> want(whole_grads.begin() + bounds[k] * inputs,
                            whole_grads.begin() + bounds[k + 1] * inputs);
    want.insert(want.end(), whole_grads.begin() + units * inputs + bounds[k],
                whole_grads.begin() + units * inputs + bounds[k + 1]);
    check_close(block_grads[k], want, "parameter gradient");
    grad = din;
  }
  check_close(grad, want_din, "input gradient");
}

BOOST_AUTO_TEST_CASE(a_split_network_has_the_blocks_in_place_of_its_dense_layer) {
  network_layers net;
  net.input = {inputs, 1, 1};
  net.layers.push_back(std::make_unique<dense>(shape{inputs, 1, 1}, units, weight_init::he));
  net.layers.push_back(std::make_unique<dense>(shape{units, 1, 1}, 2, weight_init::xavier));
  net.classes = 2;
  const std::vector<column_plan> plans{{0, {0, 3, 7}}};
  BOOST_REQUIRE(split_columns(net, plans).ok());
  BOOST_REQUIRE_EQUAL(net.layers.size(), 3u);
  BOOST_TEST(net.layers[0]->kind() == "dense_columns");
  BOOST_TEST(net.layers[1]->kind() == "dense_columns");
  BOOST_TEST(net.layers[0]->output_shape().size() == inputs + 3);
  BOOST_TEST(net.layers[1]->output_shape().size() == units);
  BOOST_TEST(net.layers[2]->kind() == "dense");
  // Bounds that miss the layer's columns, or a layer that is no dense layer, are refused.
  network_layers again;
  again.layers.push_back(std::make_unique<dense>(shape{inputs, 1, 1}, units, weight_init::he));
  const std::vector<column_plan> short_plan{{0, {0, 3, 6}}};
  auto refused = split_columns(again, short_plan);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().message.find("from 0 to its 7 units") != std::string::npos);
  const std::vector<column_plan> not_dense{{1, {0, 1, 2}}};
  BOOST_TEST(!split_columns(net, not_dense).ok());
}

BOOST_AUTO_TEST_CASE(a_plan_gives_each_block_a_share_within_the_budget) {
  // 784 inputs and 512 columns at 16 bytes a parameter (Adam): 6.4 MB whole; blocks of 4 MiB.
  const dense_layer_size layer{784, 512, 16, 0};
  auto one = plan_columns(0, layer, 1, 4u << 20);
  BOOST_REQUIRE(!one.ok());
  auto two = plan_columns(0, layer, 2, 4u << 20);
  BOOST_REQUIRE(two.ok());
  BOOST_TEST((two->bounds == std::vector<std::uint32_t>{0, 256, 512}));
}
