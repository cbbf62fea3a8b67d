#define BOOST_TEST_MODULE compute_column_split
#include <boost/test/unit_test.hpp>

#include <vector>

#include "strom/compute/partition/column_split.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

/// The fashion MLP's first layer, 784 -> 512, with Adam: value, gradient and two moments.
constexpr dense_layer_size first_mlp_layer{784, 512, 16, 0};

void check_covers_and_fits(const std::vector<column_range>& ranges, const dense_layer_size& layer,
                           const std::vector<stage_node>& nodes) {
  BOOST_REQUIRE(ranges.size() == nodes.size());
  std::size_t next = 0;
  for (std::size_t n = 0; n < ranges.size(); ++n) {
    BOOST_TEST(ranges[n].begin == next);
    BOOST_TEST(ranges[n].end >= ranges[n].begin);
    BOOST_TEST(column_bytes(layer, ranges[n].size()) <= nodes[n].memory_budget, "node " << n);
    next = ranges[n].end;
  }
  BOOST_TEST(next == layer.outputs);
}

} // namespace

BOOST_AUTO_TEST_CASE(equal_nodes_get_equal_columns) {
  const std::vector<stage_node> nodes{{"a", 1.0, 4'000'000}, {"b", 1.0, 4'000'000}};
  auto split = split_output_columns(first_mlp_layer, nodes);
  BOOST_REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.err().message));
  check_covers_and_fits(*split, first_mlp_layer, nodes);
  BOOST_TEST((*split)[0].size() == 256u);
  BOOST_TEST((*split)[1].size() == 256u);
}

BOOST_AUTO_TEST_CASE(a_faster_node_gets_more_columns) {
  const std::vector<stage_node> nodes{{"fast", 1.0, 10'000'000}, {"slow", 0.5, 10'000'000}};
  const dense_layer_size layer{784, 300, 16, 0};
  auto split = split_output_columns(layer, nodes);
  BOOST_REQUIRE(split.ok());
  check_covers_and_fits(*split, layer, nodes);
  BOOST_TEST((*split)[0].size() == 200u);
  BOOST_TEST((*split)[1].size() == 100u);
}

BOOST_AUTO_TEST_CASE(a_small_budget_caps_a_fast_nodes_share) {
  // The fast node holds only 102 columns (102 x 785 x 16 bytes = 1.281 MB, plus 10 kB input).
  const dense_layer_size layer{784, 512, 16, 10'000};
  const std::vector<stage_node> nodes{{"fast", 1.0, 1'300'000}, {"slow", 0.5, 10'000'000}};
  auto split = split_output_columns(layer, nodes);
  BOOST_REQUIRE(split.ok());
  check_covers_and_fits(*split, layer, nodes);
  BOOST_TEST((*split)[0].size() == 102u);
  BOOST_TEST((*split)[1].size() == 410u);
}

BOOST_AUTO_TEST_CASE(a_layer_too_large_for_all_the_nodes_names_its_size_and_their_offers) {
  const std::vector<stage_node> nodes{{"a", 1.0, 2'000'000}, {"b", 1.0, 3'000'000}};
  auto split = split_output_columns(first_mlp_layer, nodes);
  BOOST_REQUIRE(!split.ok());
  const auto& message = split.err().message;
  BOOST_TEST_MESSAGE(message);
  BOOST_TEST(message.find("784 inputs and 512 outputs needs 6.4 MB") != std::string::npos);
  BOOST_TEST(message.find("a 2.0 MB (159 columns), b 3.0 MB (238 columns)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_node_without_room_for_the_input_gets_no_columns) {
  const dense_layer_size layer{10, 20, 4, 1000};
  const std::vector<stage_node> nodes{{"tiny", 1.0, 500}, {"big", 1.0, 100'000}};
  auto split = split_output_columns(layer, nodes);
  BOOST_REQUIRE(split.ok());
  check_covers_and_fits(*split, layer, nodes);
  BOOST_TEST((*split)[0].size() == 0u);
  BOOST_TEST((*split)[1].size() == 20u);
}
