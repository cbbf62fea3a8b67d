#define BOOST_TEST_MODULE actors_topology
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "strom/actors/sharing/topology.hpp"

using namespace strom::actors;

namespace {

/// Node ids 1..n: the root first.
std::vector<std::uint64_t> nodes_up_to(std::uint64_t n) {
  std::vector<std::uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::uint64_t{1});
  return ids;
}

topology_plan planned(std::uint64_t n, topology_kind kind, std::uint32_t fanout = default_fanout) {
  auto plan = plan_topology(nodes_up_to(n), {kind, fanout});
  BOOST_REQUIRE(plan.ok());
  return *plan;
}

/// Nodes reached from the root by following children, each once.
std::set<std::uint64_t> reachable(const topology_plan& plan) {
  std::set<std::uint64_t> seen{plan.root};
  std::vector<std::uint64_t> open{plan.root};
  while (!open.empty()) {
    const auto at = open.back();
    open.pop_back();
    for (auto child : plan.links.at(at).children) {
      BOOST_TEST(seen.insert(child).second, "node " << child << " reached twice");
      BOOST_TEST(plan.links.at(child).parent == at);
      open.push_back(child);
    }
  }
  return seen;
}

std::size_t most_children(const topology_plan& plan) {
  std::size_t most = 0;
  for (const auto& [id, links] : plan.links)
    most = std::max(most, links.children.size());
  return most;
}

} // namespace

BOOST_AUTO_TEST_CASE(plain_hangs_every_node_under_the_root) {
  const auto plan = planned(5, topology_kind::plain);
  BOOST_TEST(plan.root == 1u);
  BOOST_TEST(plan.version == 1u);
  BOOST_TEST((plan.links.at(1).children == std::vector<std::uint64_t>{2, 3, 4, 5}));
  for (std::uint64_t id = 2; id <= 5; ++id)
    BOOST_TEST(plan.links.at(id).parent == 1u);
  BOOST_TEST(max_links(plan) == 4u);
}

BOOST_AUTO_TEST_CASE(mesh_fills_the_tree_breadth_first_within_the_fanout) {
  const auto plan = planned(10, topology_kind::mesh, 3);
  BOOST_TEST((plan.links.at(1).children == std::vector<std::uint64_t>{2, 3, 4}));
  BOOST_TEST((plan.links.at(2).children == std::vector<std::uint64_t>{5, 6, 7}));
  BOOST_TEST((plan.links.at(3).children == std::vector<std::uint64_t>{8, 9, 10}));
  BOOST_TEST(plan.links.at(4).children.empty());
  BOOST_TEST(max_links(plan) == 4u);  // three children and a parent
  BOOST_TEST(reachable(plan).size() == 10u);
}

BOOST_AUTO_TEST_CASE(auto_is_plain_below_32_nodes_and_mesh_from_32) {
  for (std::uint64_t n = 1; n < mesh_threshold; ++n)
    BOOST_TEST((planned(n, topology_kind::automatic).kind == topology_kind::plain), n);
  const auto big = planned(mesh_threshold, topology_kind::automatic);
  BOOST_TEST((big.kind == topology_kind::mesh));
  BOOST_TEST(most_children(big) <= default_fanout);
}

BOOST_AUTO_TEST_CASE(mesh_re_attaches_a_lost_nodes_children_to_the_nodes_with_fewest_children) {
  auto plan = planned(10, topology_kind::mesh, 3);
  auto after = without_node(plan, 2);  // children 5, 6, 7
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(after->version == 2u);
  BOOST_TEST(!after->links.count(2));
  // Outside the lost subtree {2, 5, 6, 7}: the root has 2 children, 3 is full, the leaves 4,
  // 8, 9, 10 have none; the lowest id among the fewest wins, one orphan at a time.
  BOOST_TEST(after->links.at(5).parent == 4u);
  BOOST_TEST(after->links.at(6).parent == 8u);
  BOOST_TEST(after->links.at(7).parent == 9u);
  BOOST_TEST(reachable(*after).size() == 9u);
  BOOST_TEST(most_children(*after) <= 3u);
}

BOOST_AUTO_TEST_CASE(mesh_keeps_the_fanout_and_reaches_every_node_after_many_removals) {
  std::mt19937 pick{17};
  auto plan = planned(200, topology_kind::mesh, 3);
  std::vector<std::uint64_t> alive = nodes_up_to(200);
  alive.erase(alive.begin());  // the root stays
  while (alive.size() > 1) {
    const auto at = std::uniform_int_distribution<std::size_t>{0, alive.size() - 1}(pick);
    auto next = without_node(plan, alive[at]);
    BOOST_REQUIRE(next.ok());
    BOOST_TEST(next->version == plan.version + 1);
    plan = std::move(*next);
    alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(at));
    BOOST_REQUIRE(most_children(plan) <= 3u);
    BOOST_REQUIRE(reachable(plan).size() == alive.size() + 1);
  }
}

BOOST_AUTO_TEST_CASE(plain_removal_drops_only_the_lost_node) {
  auto after = without_node(planned(4, topology_kind::plain), 3);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST((after->links.at(1).children == std::vector<std::uint64_t>{2, 4}));
  BOOST_TEST(after->version == 2u);
}

BOOST_AUTO_TEST_CASE(a_joining_node_hangs_under_the_nearest_node_with_room) {
  auto plan = planned(4, topology_kind::mesh, 3);  // the root is full
  auto after = with_node(plan, 9);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(after->links.at(9).parent == 2u);
  BOOST_TEST(after->version == 2u);
  BOOST_TEST(!with_node(*after, 9).ok());  // already in
}

BOOST_AUTO_TEST_CASE(a_lost_roots_first_child_becomes_the_root_and_adopts_its_siblings) {
  auto plan = planned(10, topology_kind::mesh, 3);  // 1 > 2 3 4; 2 > 5 6 7; 3 > 8 9 10
  auto after = without_node(plan, 1);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(after->root == 2u);
  BOOST_TEST(after->links.at(2).parent == 0u);
  BOOST_TEST(after->version == 2u);
  // Inside 2's subtree {2, 5, 6, 7}: 2 is full, its leaves have no children.
  BOOST_TEST(after->links.at(3).parent == 5u);
  BOOST_TEST(after->links.at(4).parent == 6u);
  BOOST_TEST(reachable(*after).size() == 9u);
  BOOST_TEST(most_children(*after) <= 3u);
  auto plain = without_node(planned(4, topology_kind::plain), 1);
  BOOST_REQUIRE(plain.ok());
  BOOST_TEST((plain->links.at(2).children == std::vector<std::uint64_t>{3, 4}));
}

BOOST_AUTO_TEST_CASE(refuses_to_remove_the_last_node_or_an_unknown_node_naming_it) {
  const auto plan = planned(3, topology_kind::mesh);
  const auto unknown = without_node(plan, 42);
  BOOST_REQUIRE(!unknown.ok());
  BOOST_TEST(unknown.err().message.find("node 42 is not in plan version 1") != std::string::npos);
  const auto last = without_node(planned(1, topology_kind::mesh), 1);
  BOOST_REQUIRE(!last.ok());
  BOOST_TEST(last.err().message.find("node 1 is the root and the plan's last node")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_an_empty_membership_a_repeated_id_and_fanout_zero) {
  BOOST_TEST(!plan_topology({}, {}).ok());
  BOOST_TEST(!plan_topology({1, 2, 1}, {}).ok());
  BOOST_TEST(!plan_topology({1, 2}, {topology_kind::mesh, 0}).ok());
}
