#define BOOST_TEST_MODULE actors_average_reduction
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "strom/actors/averaging/average_reduction.hpp"
#include "strom/compute/codecs/decode.hpp"
#include "strom/compute/codecs/dense_codec.hpp"

// One relay's share of reducing parameter averages along the tree, driven directly: which sums
// it waits for, what it sends up, out and back, and how a new tree, a late sum or a hostile one
// is met.

using namespace strom;
using namespace strom::actors;

namespace {

/// A sum of node `origin` to average `index` of `round` along tree version `attempt`, the
/// segment from contribution element `offset`.
average_part part_of(std::uint64_t origin, const std::vector<float>& values,
                     std::vector<std::uint64_t> members, std::uint64_t attempt = 1,
                     std::uint32_t round = 0, std::uint64_t index = 0, std::uint64_t offset = 0) {
  const compute::frame_header header{origin, 0, index, attempt, round, offset};
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(values), {});
  BOOST_REQUIRE(built.ok());
  return {round, index, attempt, std::move(members), shared_frame{std::move(*built)}};
}

/// The values of a sum's frame.
std::vector<float> values_of(const shared_frame& sum) {
  compute::frame_workspace workspace;
  auto view = compute::read_update_frame(sum.value, workspace);
  BOOST_REQUIRE(view.ok());
  std::vector<float> values(view->elements, 0.0f);
  BOOST_REQUIRE(compute::decode_add(view->enc, 0.0f, view->payload, values).ok());
  return values;
}

/// Version `version` of a tree of `nodes` under `parents` (0: the root), as node `node` sees it.
average_tree tree_of(std::uint64_t version, std::uint64_t node, std::vector<std::uint64_t> nodes,
                     std::vector<std::uint64_t> parents) {
  std::uint64_t root = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (parents[i] == 0)
      root = nodes[i];
  return {version, node, root, std::move(nodes), std::move(parents)};
}

/// Node 1 is the root over 2 and 3; node 2 is the parent of 4.
average_tree star_and_leaf(std::uint64_t version, std::uint64_t node) {
  return tree_of(version, node, {1, 2, 3, 4}, {0, 1, 1, 2});
}

const std::vector<std::uint64_t> all_four{1, 2, 3, 4};

/// What `sends` holds, when it must hold nothing.
bool nothing(const reduction_sends& sends) {
  return sends.up.empty() && sends.out.empty() && sends.back.empty();
}

template <class T>
T taken(result<T> r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  return std::move(*r);
}

} // namespace

BOOST_AUTO_TEST_CASE(the_root_sends_the_total_once_its_own_and_every_childs_sum_came) {
  average_reduction root;
  BOOST_TEST(nothing(root.set_tree(star_and_leaf(1, 1))));
  BOOST_TEST(nothing(taken(root.from_child(part_of(3, {1, 5, 50}, all_four)))));
  BOOST_TEST(nothing(taken(root.own(part_of(1, {1, 1, 10}, all_four, 0)))));
  // Node 2's sum holds node 4's: weight 2.
  const auto sends = taken(root.from_child(part_of(2, {2, 6, 60}, all_four)));
  BOOST_TEST(sends.up.empty());
  BOOST_REQUIRE(sends.out.size() == 1u);
  BOOST_TEST(values_of(sends.out.front().sum) == (std::vector<float>{4, 12, 120}));
  BOOST_TEST(root.kept().size() == 1u);
}

BOOST_AUTO_TEST_CASE(each_segment_of_a_sum_is_reduced_as_soon_as_it_is_complete) {
  // A contribution of one segment and one more element: the root sends the second segment's
  // total down before the child's first segment came.
  constexpr auto segment = average_segment_elements;
  average_reduction root;
  root.set_tree(tree_of(1, 1, {1, 2}, {0, 1}));
  const std::vector<std::uint64_t> members{1, 2};
  const std::vector<float> first(segment, 1.0f);
  BOOST_TEST(nothing(taken(root.own(part_of(1, first, members, 0)))));
  BOOST_TEST(nothing(taken(root.own(part_of(1, {3}, members, 0, 0, 0, segment)))));
  const auto second = taken(root.from_child(part_of(2, {4}, members, 1, 0, 0, segment)));
  BOOST_REQUIRE(second.out.size() == 1u);
  BOOST_TEST(values_of(second.out.front().sum) == (std::vector<float>{7}));
  const auto done = taken(root.from_child(part_of(2, first, members)));
  BOOST_REQUIRE(done.out.size() == 1u);
  BOOST_TEST(values_of(done.out.front().sum) == std::vector<float>(segment, 2.0f));
  BOOST_TEST(root.kept().size() == 2u);  // both segments of the average
  // A sum that is not a segment is refused: past a segment's size, or off a segment's start.
  BOOST_TEST(!root.from_child(part_of(2, std::vector<float>(segment + 1, 1.0f), members, 1, 0, 1))
                .ok());
  BOOST_TEST(!root.from_child(part_of(2, {1}, members, 1, 0, 1, 5)).ok());
}

BOOST_AUTO_TEST_CASE(an_inner_node_sends_its_subtrees_sum_up_once_linked_to_its_parent) {
  average_reduction inner;
  inner.set_tree(star_and_leaf(1, 2));
  BOOST_TEST(nothing(taken(inner.own(part_of(2, {1, 2, 3}, all_four, 0)))));
  BOOST_TEST(nothing(taken(inner.from_child(part_of(4, {1, 4, 5}, all_four)))));  // no link
  const auto linked = inner.set_parent_linked(true);
  BOOST_REQUIRE(linked.up.size() == 1u);
  const auto& up = linked.up.front();
  BOOST_TEST(up.attempt == 1u);
  BOOST_TEST(up.members == all_four);
  BOOST_TEST(values_of(up.sum) == (std::vector<float>{2, 6, 8}));
  // The total comes down: it goes out (trainers and node 4) and the average closes.
  const average_total total{0, 0, part_of(1, {4, 10, 20}, {}).sum};
  BOOST_TEST(taken(inner.total(total)).out.size() == 1u);
  BOOST_TEST(nothing(taken(inner.total(total))));
  // Node 4's sum of it again (say, resent after a repair) is answered with the total.
  BOOST_TEST(taken(inner.from_child(part_of(4, {1, 4, 5}, all_four))).back.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_child_whose_subtree_holds_no_member_of_the_round_is_not_waited_for) {
  // Node 3 joined during the round: it trains from the next, so the root waits for 2 only.
  average_reduction root;
  root.set_tree(star_and_leaf(1, 1));
  const std::vector<std::uint64_t> members{1, 2, 4};
  BOOST_TEST(nothing(taken(root.own(part_of(1, {1, 1}, members, 0)))));
  BOOST_TEST(taken(root.from_child(part_of(2, {2, 2}, members))).out.size() == 1u);
}

BOOST_AUTO_TEST_CASE(children_are_added_in_node_order_whatever_order_they_came_in) {
  // Floats do not associate: 1e8 + 1 - 1e8 depends on the order. Both arrival orders give
  // the sum of own, then node 2's, then node 3's.
  const auto total_when = [](bool three_first) {
    average_reduction root;
    root.set_tree(tree_of(1, 1, {1, 2, 3}, {0, 1, 1}));
    const std::vector<std::uint64_t> members{1, 2, 3};
    (void)root.own(part_of(1, {1, 1e8f}, members, 0));
    const auto two = part_of(2, {1, 1.0f}, members);
    const auto three = part_of(3, {1, -1e8f}, members);
    auto first = taken(root.from_child(three_first ? three : two));
    BOOST_TEST(nothing(first));
    const auto sends = taken(root.from_child(three_first ? two : three));
    BOOST_REQUIRE(sends.out.size() == 1u);
    return values_of(sends.out.front().sum);
  };
  const auto in_order = total_when(false);
  BOOST_TEST(in_order == total_when(true));
  BOOST_TEST(in_order[1] == (1e8f + 1.0f) + -1e8f);
}

BOOST_AUTO_TEST_CASE(a_new_tree_starts_open_averages_again_along_it_and_drops_older_sums) {
  // Node 2 is lost: node 4 hangs under the root now. Node 3's sum of version 1 is dropped
  // and counted again only as it comes along version 2; node 4's came before the root had
  // version 2 and waited for it.
  average_reduction root;
  root.set_tree(star_and_leaf(1, 1));
  (void)root.own(part_of(1, {1, 1}, all_four, 0));
  BOOST_TEST(nothing(taken(root.from_child(part_of(3, {1, 3}, all_four, 1)))));
  BOOST_TEST(nothing(taken(root.from_child(part_of(4, {1, 4}, all_four, 2)))));  // early
  BOOST_TEST(nothing(root.set_tree(tree_of(2, 1, {1, 3, 4}, {0, 1, 1}))));
  BOOST_TEST(nothing(taken(root.from_child(part_of(3, {1, 3}, all_four, 1)))));  // stale
  const auto sends = taken(root.from_child(part_of(3, {1, 3}, all_four, 2)));
  BOOST_REQUIRE(sends.out.size() == 1u);
  BOOST_TEST(values_of(sends.out.front().sum) == (std::vector<float>{3, 8}));
}

BOOST_AUTO_TEST_CASE(a_lost_childs_subtree_is_no_longer_waited_for_under_a_new_tree) {
  average_reduction root;
  root.set_tree(tree_of(1, 1, {1, 2}, {0, 1}));
  (void)root.own(part_of(1, {1, 7}, {1, 2}, 0));
  const auto sends = root.set_tree(tree_of(2, 1, {1}, {0}));
  BOOST_REQUIRE(sends.out.size() == 1u);
  BOOST_TEST(values_of(sends.out.front().sum) == (std::vector<float>{1, 7}));
}

BOOST_AUTO_TEST_CASE(a_sum_of_an_average_already_complete_is_answered_with_its_total) {
  // Node 4, re-attached under the root, sends its sum again; the root took the total before.
  average_reduction root;
  root.set_tree(tree_of(1, 1, {1, 4}, {0, 1}));
  (void)root.own(part_of(1, {1, 1}, {1, 4}, 0));
  const auto done = taken(root.from_child(part_of(4, {1, 3}, {1, 4})));
  BOOST_REQUIRE(done.out.size() == 1u);
  const auto again = taken(root.from_child(part_of(4, {1, 3}, {1, 4})));
  BOOST_TEST(again.out.empty());
  BOOST_REQUIRE(again.back.size() == 1u);
  BOOST_TEST(values_of(again.back.front().sum) == (std::vector<float>{2, 4}));
}

BOOST_AUTO_TEST_CASE(totals_pass_once_in_order_and_the_last_two_are_kept_for_new_neighbours) {
  average_reduction leaf;
  leaf.set_tree(tree_of(1, 2, {1, 2}, {0, 1}));
  const auto total = [](std::uint64_t index) {
    return average_total{0, index, part_of(1, {2, float(index)}, {}, 0, 0, index).sum};
  };
  BOOST_TEST(taken(leaf.total(total(0))).out.size() == 1u);
  BOOST_TEST(nothing(taken(leaf.total(total(0)))));  // over another path: dropped
  BOOST_TEST(taken(leaf.total(total(1))).out.size() == 1u);
  BOOST_TEST(taken(leaf.total(total(2))).out.size() == 1u);
  BOOST_REQUIRE(leaf.kept().size() == 2u);
  BOOST_TEST(leaf.kept().front().index == 1u);
  BOOST_TEST(leaf.kept().back().index == 2u);
  // A newer round drops what is open of older ones: a late sum of round 0 is not kept.
  const auto next = average_total{1, 0, part_of(1, {2, 9}, {}, 0, 1, 0).sum};
  BOOST_TEST(taken(leaf.total(next)).out.size() == 1u);
  BOOST_TEST(nothing(taken(leaf.total(total(3)))));
}

BOOST_AUTO_TEST_CASE(hostile_sums_are_refused_naming_why_and_change_nothing) {
  average_reduction root;
  root.set_tree(tree_of(1, 1, {1, 2, 3}, {0, 1, 2}));  // 3 is 2's child, not 1's
  const std::vector<std::uint64_t> members{1, 2, 3};
  (void)root.own(part_of(1, {1, 1, 1}, members, 0));
  const auto not_a_child = root.from_child(part_of(3, {1, 1, 1}, members));
  BOOST_REQUIRE(!not_a_child.ok());
  BOOST_TEST(not_a_child.err().message.find("no child of node 1") != std::string::npos);
  const auto short_sum = root.from_child(part_of(2, {1, 1}, members));
  BOOST_REQUIRE(!short_sum.ok());
  BOOST_TEST(short_sum.err().message.find("has 2 elements at 0, the others 3") != std::string::npos);
  const auto infinite =
    root.from_child(part_of(2, {1, 1, std::numeric_limits<float>::infinity()}, members));
  BOOST_TEST(!infinite.ok());
  const auto no_members = root.from_child(part_of(2, {1, 1, 1}, {}));
  BOOST_TEST(!no_members.ok());
  // A flood of sums of a tree version to come is bounded.
  result<reduction_sends> early{reduction_sends{}};
  for (std::uint64_t i = 0; i < 5 && early.ok(); ++i)
    early = root.from_child(part_of(2, {1, 1, 1}, members, 9, 0, i));
  BOOST_TEST(!early.ok());
  // None of it counted: node 2's real sum completes the average with its own values.
  const auto sends = taken(root.from_child(part_of(2, {2, 4, 6}, members)));
  BOOST_REQUIRE(sends.out.size() == 1u);
  BOOST_TEST(values_of(sends.out.front().sum) == (std::vector<float>{3, 5, 7}));
}
