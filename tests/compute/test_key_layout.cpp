#define BOOST_TEST_MODULE compute_key_layout
#include <boost/test/unit_test.hpp>

#include <set>
#include <vector>

#include "strom/compute/kvstore/key_layout.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "support/spec_from_text.hpp"

using namespace strom;
using namespace strom::compute;

namespace {

/// The example job's MLP, smaller: 784-32-16-10.
constexpr const char* mlp = R"((
  input = (channels = 1, height = 28, width = 28),
  layers = [(dense = (units = 32, activation = relu)), (dense = (units = 16, activation = relu)),
            (output = (units = 10))]))";

} // namespace

BOOST_AUTO_TEST_CASE(every_dense_layer_has_a_weights_key_and_a_biases_key_in_buffer_order) {
  testing::spec_from_text<schema::Network> spec{mlp};
  auto net = make_model(spec.reader, 1);
  BOOST_REQUIRE(net.ok());
  const auto keys = parameter_keys(**net);
  const std::vector<std::size_t> counts{784 * 32, 32, 32 * 16, 16, 16 * 10, 10};
  BOOST_REQUIRE_EQUAL(keys.size(), counts.size());
  std::size_t offset = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    BOOST_TEST(keys[k].key == k);
    BOOST_TEST(keys[k].offset == offset);
    BOOST_TEST(keys[k].count == counts[k]);
    offset += counts[k];
  }
  BOOST_TEST(offset == (*net)->parameters().size());
}

BOOST_AUTO_TEST_CASE(a_small_key_lives_whole_on_the_server_its_hash_picks) {
  const std::vector<parameter_key> keys{{0, 0, 10}, {1, 10, 20}, {2, 30, 5}};
  auto placed = place_keys(keys, 3, 100);
  BOOST_REQUIRE(placed.ok());
  BOOST_REQUIRE_EQUAL(placed->size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    BOOST_TEST((*placed)[k].server == server_of(static_cast<std::uint32_t>(k), 3));
    BOOST_TEST((*placed)[k].offset == keys[k].offset);
    BOOST_TEST((*placed)[k].count == keys[k].count);
  }
}

BOOST_AUTO_TEST_CASE(the_hash_spreads_keys_over_every_server_and_is_stable) {
  std::set<std::uint32_t> used;
  for (std::uint32_t key = 0; key < 64; ++key)
    used.insert(server_of(key, 4));
  BOOST_TEST(used.size() == 4u);
  // The same on every machine and in every run: a fixed value pins the function.
  BOOST_TEST(server_of(0, 1000) == server_of(0, 1000));
  BOOST_TEST(server_of(7, 1) == 0u);
}

BOOST_AUTO_TEST_CASE(a_key_at_the_big_array_bound_is_split_evenly_across_all_servers) {
  const std::vector<parameter_key> keys{{0, 0, 4}, {1, 4, 11}};
  auto placed = place_keys(keys, 3, 10);
  BOOST_REQUIRE(placed.ok());
  BOOST_REQUIRE_EQUAL(placed->size(), 4u);  // key 0 whole, key 1 in three pieces
  const std::vector<std::size_t> offsets{4, 8, 12};
  const std::vector<std::size_t> counts{4, 4, 3};
  for (std::uint32_t s = 0; s < 3; ++s) {
    const auto& piece = (*placed)[1 + s];
    BOOST_TEST(piece.key == 1u);
    BOOST_TEST(piece.part == s);
    BOOST_TEST(piece.server == s);
    BOOST_TEST(piece.offset == offsets[s]);
    BOOST_TEST(piece.count == counts[s]);
  }
}

BOOST_AUTO_TEST_CASE(no_servers_is_refused_with_the_count_named) {
  auto placed = place_keys({{0, 0, 4}}, 0);
  BOOST_REQUIRE(!placed.ok());
  BOOST_TEST(placed.err().message.find("at least one server, got 0") != std::string::npos);
}
