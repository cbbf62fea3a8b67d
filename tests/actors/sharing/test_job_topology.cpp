#define BOOST_TEST_MODULE actors_job_topology
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "strom/actors/sharing/job_topology.hpp"

using namespace strom::actors;

namespace {

topology_plan mesh_of(std::uint64_t nodes, std::uint32_t fanout) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = 1; id <= nodes; ++id)
    ids.push_back(id);
  auto plan = plan_topology(ids, {topology_kind::mesh, fanout});
  BOOST_REQUIRE(plan.ok());
  return *plan;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_lost_origins_count_is_the_longest_prefix_any_survivor_passed) {
  // Two workers; the lost node's parent got fewer of its frames than its child, and a node
  // that saw none of the current round still reports the round before.
  const std::vector<origin_frames> counts{{9, 4, {3, 2}, false},
                                          {9, 4, {5, 4}, true},
                                          {9, 3, {50, 50}, true}};
  const auto all = union_of(9, counts);
  BOOST_TEST(all.origin == 9u);
  BOOST_TEST(all.round == 4u);
  BOOST_TEST((all.frames == std::vector<std::uint64_t>{5, 4}));
  BOOST_TEST(all.drained);
}

BOOST_AUTO_TEST_CASE(no_survivor_count_leaves_nothing_passed) {
  const auto all = union_of(9, {});
  BOOST_TEST(all.frames.empty());
  BOOST_TEST(!all.drained);
}

BOOST_AUTO_TEST_CASE(the_edges_to_wire_after_a_loss_are_the_re_attached_children_only) {
  const auto before = mesh_of(7, 2);  // 1 > 2 3; 2 > 4 5; 3 > 6 7
  const auto after = without_node(before, 2);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST((reattached(before, *after) == std::vector<std::uint64_t>{4, 5}));
  // A lost root: its first child becomes the root (no parent to wire), its sibling moves.
  const auto rerooted = without_node(before, 1);
  BOOST_REQUIRE(rerooted.ok());
  BOOST_TEST((reattached(before, *rerooted) == std::vector<std::uint64_t>{3}));
}
