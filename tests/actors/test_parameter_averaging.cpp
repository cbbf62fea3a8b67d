#define BOOST_TEST_MODULE actors_parameter_averaging
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "strom/actors/parameter_averaging.hpp"
#include "strom/compute/codecs/dense_codec.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t parameters = 3;
constexpr std::size_t updater_state = 2;
const averaging_options with_updaters{5, true};

/// A contribution of weight 1: parameters all `p`, updater state all `u`.
std::vector<float> contribution(float p, float u) {
  return {1.0f, p, p, p, u, u};
}

/// Sums for a round of node 1 (2 workers) and node 2 (1 worker).
averaging_sums round_of_three(std::uint32_t round = 0) {
  averaging_sums sums{contribution_elements(parameters, updater_state, with_updaters)};
  sums.start_round(round, {1, 2}, {2, 1});
  return sums;
}

/// The index an accepted contribution went to; -1 for a late one that was dropped.
std::int64_t index_of(const result<std::optional<std::uint64_t>>& added) {
  BOOST_REQUIRE(added.ok());
  return added.value() ? static_cast<std::int64_t>(*added.value()) : -1;
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

BOOST_AUTO_TEST_CASE(an_average_is_complete_once_every_member_worker_contributed) {
  auto sums = round_of_three();
  BOOST_TEST(index_of(sums.add(1, 0, 0, contribution(1, 10))) == 0);
  BOOST_TEST(index_of(sums.add(2, 0, 0, contribution(2, 20))) == 0);
  BOOST_TEST(!sums.complete(0));
  BOOST_TEST(index_of(sums.add(1, 1, 0, contribution(6, 60))) == 0);
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{3, 3, 3}));
  BOOST_TEST(u == (std::vector<float>{30, 30}));
}

BOOST_AUTO_TEST_CASE(without_averaged_updaters_only_the_parameters_change) {
  averaging_sums sums{contribution_elements(parameters, updater_state, {5, false})};
  sums.start_round(0, {1}, {2});
  BOOST_TEST(sums.add(1, 0, 0, std::vector<float>{1, 1, 2, 3}).ok());
  BOOST_TEST(sums.add(1, 1, 0, std::vector<float>{1, 3, 4, 5}).ok());
  std::vector<float> p(parameters), u{7, 7};
  sums.take(0, p, {});
  BOOST_TEST(p == (std::vector<float>{2, 3, 4}));
  BOOST_TEST(u == (std::vector<float>{7, 7}));
}

BOOST_AUTO_TEST_CASE(a_lost_origin_is_no_longer_waited_for_and_what_it_sent_still_counts) {
  auto sums = round_of_three();
  BOOST_TEST(sums.add(1, 0, 0, contribution(1, 1)).ok());
  BOOST_TEST(sums.add(2, 0, 0, contribution(4, 4)).ok());
  sums.forget(1);
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{2.5f, 2.5f, 2.5f}));
}

BOOST_AUTO_TEST_CASE(the_kth_contributions_of_all_workers_go_together_in_any_arrival_order) {
  auto sums = round_of_three();
  // Node 2's worker took average 0 elsewhere already and sent its second contribution first.
  BOOST_TEST(sums.add(2, 0, 0, contribution(0, 0)).ok());
  BOOST_TEST(index_of(sums.add(2, 0, 0, contribution(9, 9))) == 1);
  BOOST_TEST(sums.add(1, 0, 0, contribution(3, 3)).ok());
  BOOST_TEST(sums.add(1, 1, 0, contribution(3, 3)).ok());
  BOOST_TEST(sums.complete(0));
  BOOST_TEST(!sums.complete(1));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{2, 2, 2}));
}

BOOST_AUTO_TEST_CASE(hostile_contributions_are_refused_and_leave_the_sums_as_they_were) {
  auto sums = round_of_three();
  BOOST_TEST(!sums.add(3, 0, 0, contribution(1, 1)).ok());          // not a member
  BOOST_TEST(!sums.add(2, 1, 0, contribution(1, 1)).ok());          // node 2 has one worker
  BOOST_TEST(!sums.add(1, 0, 0, std::vector<float>{1, 2}).ok());    // wrong size
  BOOST_TEST(!sums.add(1, 0, 2, contribution(1, 1)).ok());          // a round past the next
  BOOST_TEST(sums.add(1, 0, 0, contribution(1, 1)).ok());
  BOOST_TEST(sums.add(1, 0, 0, contribution(1, 1)).ok());
  const auto ahead = sums.add(1, 0, 0, contribution(1, 1));  // two averages ahead
  BOOST_REQUIRE(!ahead.ok());
  BOOST_TEST(ahead.err().message.find("still open") != std::string::npos);
  BOOST_TEST(sums.add(1, 1, 0, contribution(5, 5)).ok());
  BOOST_TEST(sums.add(2, 0, 0, contribution(3, 3)).ok());
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{3, 3, 3}));
}

BOOST_AUTO_TEST_CASE(a_frame_that_is_no_whole_dense_contribution_is_refused) {
  auto sums = round_of_three();
  compute::update_frame_view frame;
  frame.header = {1, 0, 0, 0, 0, 0};
  frame.enc = compute::encoding::threshold;
  frame.elements = contribution_elements(parameters, updater_state, with_updaters);
  BOOST_TEST(!sums.add(frame).ok());
  const auto values = contribution(2, 2);
  const auto dense = compute::dense_fp32_update(values);
  frame.enc = dense.enc;
  frame.payload = dense.payload;
  frame.header.offset = 1;
  BOOST_TEST(!sums.add(frame).ok());
  frame.header.offset = 0;
  BOOST_TEST(index_of(sums.add(frame)) == 0);
}

BOOST_AUTO_TEST_CASE(a_faster_nodes_next_round_is_kept_and_a_late_earlier_round_dropped) {
  auto sums = round_of_three(4);
  BOOST_TEST(sums.add(2, 0, 5, contribution(8, 8)).ok());  // round 5 started there already
  BOOST_TEST(index_of(sums.add(2, 0, 3, contribution(1, 1))) == -1);
  sums.start_round(5, {1, 2}, {2, 1});
  BOOST_TEST(sums.add(1, 0, 5, contribution(2, 2)).ok());
  BOOST_TEST(sums.add(1, 1, 5, contribution(2, 2)).ok());
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{4, 4, 4}));
}

BOOST_AUTO_TEST_CASE(the_trainers_own_contribution_is_counted_and_taken_from_its_replica) {
  auto sums = round_of_three();
  BOOST_TEST(index_of(sums.add_own(1, 0, 0)) == 0);
  BOOST_TEST(sums.add(1, 1, 0, contribution(2, 20)).ok());
  BOOST_TEST(!sums.complete(0));
  BOOST_TEST(sums.add(2, 0, 0, contribution(4, 40)).ok());
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters, 6.0f), u(updater_state, 60.0f);  // its own: 6 and 60
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{4, 4, 4}));
  BOOST_TEST(u == (std::vector<float>{40, 40}));
}

BOOST_AUTO_TEST_CASE(a_trainer_whose_peers_were_all_lost_keeps_its_own_replica) {
  auto sums = round_of_three();
  BOOST_TEST(index_of(sums.add_own(1, 0, 0)) == 0);
  sums.forget(2);
  BOOST_TEST(!sums.complete(0));  // its sibling is still a member
  sums.forget(1);
  BOOST_TEST(sums.complete(0));
  std::vector<float> p(parameters, 6.0f), u(updater_state, 60.0f);
  sums.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{6, 6, 6}));
}
