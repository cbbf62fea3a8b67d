#define BOOST_TEST_MODULE actors_parameter_averaging
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "strom/actors/node_average.hpp"
#include "strom/actors/parameter_averaging.hpp"
#include "strom/compute/codecs/dense_codec.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t parameters = 3;
constexpr std::size_t updater_state = 2;
constexpr std::size_t elements = 1 + parameters + updater_state;

/// A node's contribution of weight `w`: parameters all `p`, updater state all `u` (sums).
std::vector<float> contribution(float w, float p, float u) { return {w, p, p, p, u, u}; }

/// A received frame view of `values` from `origin` in `round`; `values` must outlive it.
compute::update_frame_view frame_of(const std::vector<float>& values, std::uint64_t origin,
                                    std::uint32_t round = 0) {
  const auto dense = compute::dense_fp32_update(values);
  compute::update_frame_view frame;
  frame.header = {origin, 0, 0, 0, round, 0};
  frame.enc = dense.enc;
  frame.elements = values.size();
  frame.payload = dense.payload;
  return frame;
}

/// The index an accepted contribution went to; -1 for a late one that was dropped.
std::int64_t index_of(const result<std::optional<std::uint64_t>>& added) {
  BOOST_REQUIRE_MESSAGE(added.ok(), (added.ok() ? "" : added.err().message));
  return added.value() ? static_cast<std::int64_t>(*added.value()) : -1;
}

/// Sums of the trainer on node 1 for a round of nodes 1, 2 and 3.
averaging_sums round_of_three(std::uint32_t round = 0) {
  averaging_sums sums{elements};
  sums.start_round(round, {1, 2, 3});
  return sums;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_contribution_holds_a_weight_the_parameters_and_maybe_the_updater_state) {
  BOOST_TEST(contribution_elements(10, 20, {5, true}) == 31u);
  BOOST_TEST(contribution_elements(10, 20, {5, false}) == 11u);
}

BOOST_AUTO_TEST_CASE(workers_contribute_every_frequency_steps_and_at_the_last_common_step) {
  std::vector<std::uint64_t> at;
  for (std::uint64_t step = 0; step <= 14; ++step)
    if (contributes_at(step, 12, {5, true}))
      at.push_back(step);
  BOOST_TEST(at == (std::vector<std::uint64_t>{5, 10, 12}));
  BOOST_TEST(!contributes_at(5, 12, {0, true}));  // sharing updates: never
}

BOOST_AUTO_TEST_CASE(an_average_weighs_every_nodes_sum_by_its_workers) {
  auto sums = round_of_three();
  BOOST_TEST(index_of(sums.add_own(1, 0)) == 0);
  const auto two = contribution(2, 8, 80);  // node 2: two workers, parameters 4 each
  BOOST_TEST(index_of(sums.add(frame_of(two, 2))) == 0);
  BOOST_TEST(!sums.complete(0));
  const auto three = contribution(1, 1, 10);
  BOOST_TEST(index_of(sums.add(frame_of(three, 3))) == 0);
  BOOST_TEST(sums.complete(0));
  const auto own = contribution(1, 7, 70);  // this node: one worker
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, own, p, u);
  BOOST_TEST(p == (std::vector<float>{4, 4, 4}));
  BOOST_TEST(u == (std::vector<float>{40, 40}));
}

BOOST_AUTO_TEST_CASE(without_averaged_updaters_only_the_parameters_change) {
  averaging_sums sums{1 + parameters};
  sums.start_round(0, {1, 2});
  BOOST_TEST(sums.add_own(1, 0).ok());
  const std::vector<float> other{1, 3, 4, 5};
  BOOST_TEST(sums.add(frame_of(other, 2)).ok());
  std::vector<float> p(parameters), u{7, 7};
  sums.take(0, std::vector<float>{1, 1, 2, 3}, p, {});
  BOOST_TEST(p == (std::vector<float>{2, 3, 4}));
  BOOST_TEST(u == (std::vector<float>{7, 7}));
}

BOOST_AUTO_TEST_CASE(a_lost_node_is_no_longer_waited_for_and_what_it_sent_still_counts) {
  auto sums = round_of_three();
  BOOST_TEST(sums.add_own(1, 0).ok());
  const auto two = contribution(1, 4, 4);
  BOOST_TEST(sums.add(frame_of(two, 2)).ok());
  sums.forget(2);
  BOOST_TEST(!sums.complete(0));
  sums.forget(3);
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, contribution(1, 2, 2), p, u);
  BOOST_TEST(p == (std::vector<float>{3, 3, 3}));
}

BOOST_AUTO_TEST_CASE(a_trainer_whose_peers_were_all_lost_takes_its_nodes_sum) {
  averaging_sums sums{elements};
  sums.start_round(0, {1, 2});
  BOOST_TEST(sums.add_own(1, 0).ok());
  sums.forget(2);
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, contribution(2, 12, 120), p, u);
  BOOST_TEST(p == (std::vector<float>{6, 6, 6}));
}

BOOST_AUTO_TEST_CASE(the_kth_contributions_of_all_nodes_go_together_in_any_arrival_order) {
  auto sums = round_of_three();
  // Node 2 took average 0 already and sent its second contribution before node 3's first.
  const auto first = contribution(1, 0, 0);
  const auto second = contribution(1, 9, 9);
  BOOST_TEST(index_of(sums.add(frame_of(first, 2))) == 0);
  BOOST_TEST(index_of(sums.add(frame_of(second, 2))) == 1);
  BOOST_TEST(sums.add_own(1, 0).ok());
  BOOST_TEST(!sums.complete(0));
  const auto three = contribution(1, 3, 3);
  BOOST_TEST(sums.add(frame_of(three, 3)).ok());
  BOOST_TEST(sums.complete(0));
  BOOST_TEST(!sums.complete(1));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, contribution(1, 3, 3), p, u);
  BOOST_TEST(p == (std::vector<float>{2, 2, 2}));
}

BOOST_AUTO_TEST_CASE(hostile_contributions_are_refused_and_leave_the_sums_as_they_were) {
  auto sums = round_of_three();
  const auto good = contribution(1, 1, 1);
  BOOST_TEST(!sums.add(frame_of(good, 4)).ok());     // not a member
  BOOST_TEST(!sums.add(frame_of(good, 2, 2)).ok());  // a round past the next
  const std::vector<float> short_one{1, 2};
  BOOST_TEST(!sums.add(frame_of(short_one, 2)).ok());  // wrong size
  auto shifted = frame_of(good, 2);
  shifted.header.offset = 1;
  BOOST_TEST(!sums.add(shifted).ok());
  auto sparse = frame_of(good, 2);
  sparse.enc = compute::encoding::threshold;
  BOOST_TEST(!sums.add(sparse).ok());
  const std::vector<float> not_finite{1, 1, 1, 1, 1, std::numeric_limits<float>::infinity()};
  BOOST_TEST(!sums.add(frame_of(not_finite, 2)).ok());
  BOOST_TEST(sums.add(frame_of(good, 2)).ok());
  BOOST_TEST(sums.add(frame_of(good, 2)).ok());
  const auto ahead = sums.add(frame_of(good, 2));  // two averages ahead
  BOOST_REQUIRE(!ahead.ok());
  BOOST_TEST(ahead.err().message.find("still open") != std::string::npos);
  BOOST_TEST(sums.add_own(1, 0).ok());
  const auto three = contribution(1, 4, 4);
  BOOST_TEST(sums.add(frame_of(three, 3)).ok());
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, contribution(1, 4, 4), p, u);
  BOOST_TEST(p == (std::vector<float>{3, 3, 3}));
}

BOOST_AUTO_TEST_CASE(a_faster_nodes_next_round_is_kept_and_a_late_earlier_round_dropped) {
  auto sums = round_of_three(4);
  const auto next = contribution(1, 8, 8);
  BOOST_TEST(sums.add(frame_of(next, 2, 5)).ok());  // round 5 started there already
  const auto late = contribution(1, 1, 1);
  BOOST_TEST(index_of(sums.add(frame_of(late, 2, 3))) == -1);
  sums.start_round(5, {1, 2});
  BOOST_TEST(sums.add_own(1, 5).ok());
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, contribution(1, 2, 2), p, u);
  BOOST_TEST(p == (std::vector<float>{5, 5, 5}));
}

BOOST_AUTO_TEST_CASE(a_nodes_sum_is_complete_once_each_worker_added_and_its_last_is_told) {
  node_average node{2, elements};
  const std::vector<float> p1{1, 2, 3}, u1{4, 5}, p2{3, 2, 1}, u2{6, 7};
  BOOST_TEST(!node.add({0, 0}, p1, u1));
  BOOST_TEST(!node.complete({0, 0}));
  BOOST_TEST(node.add({0, 0}, p2, u2));
  BOOST_TEST(node.complete({0, 0}));
  const auto sum = node.sum({0, 0});
  BOOST_TEST((std::vector<float>(sum.begin(), sum.end())
              == std::vector<float>{2, 4, 4, 4, 10, 12}));
  // The next average uses the other buffer; the one after reuses this one, from scratch.
  BOOST_TEST(!node.add({0, 1}, p1, u1));
  BOOST_TEST(node.complete({0, 0}));
  BOOST_TEST(!node.add({0, 2}, p2, u2));
  BOOST_TEST(!node.complete({0, 0}));
  BOOST_TEST(node.add({0, 2}, p2, u2));
  const auto again = node.sum({0, 2});
  BOOST_TEST((std::vector<float>(again.begin(), again.end())
              == std::vector<float>{2, 6, 4, 2, 12, 14}));
  BOOST_CHECK_THROW(node.sum({1, 2}), std::logic_error);  // another round's
}
