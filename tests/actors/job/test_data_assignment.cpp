#define BOOST_TEST_MODULE actors_data_assignment
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strom/actors/job/data_assignment.hpp"

using namespace strom::actors;

namespace {

const data_plan data{1000, 32, 42, true};
const std::vector<node_workers> three_nodes{{1, 2}, {5, 1}, {9, 3}};

/// Every sample of all the plan's work, sorted.
std::vector<std::uint32_t> covered(const std::map<std::uint64_t, std::vector<round_work>>& plan) {
  std::vector<std::uint32_t> all;
  for (const auto& [node, works] : plan)
    for (const auto& work : works) {
      const auto samples = samples_of(work, data);
      all.insert(all.end(), samples.begin(), samples.end());
    }
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<std::uint32_t> range(std::uint32_t begin, std::uint32_t end) {
  std::vector<std::uint32_t> r;
  for (auto i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(an_epoch_round_gives_each_worker_one_partition_covering_the_set_once) {
  const auto plan = plan_round(three_nodes, 4, 2, data, nullptr);
  BOOST_TEST(plan.size() == 3u);
  BOOST_TEST(plan.at(9).size() == 3u);
  BOOST_TEST(plan.at(9)[2].rank == 5u);
  BOOST_TEST(plan.at(9)[2].ranks == 6u);
  BOOST_TEST(plan.at(5)[0].round == 4u);
  BOOST_TEST(plan.at(5)[0].epoch == 2u);
  BOOST_TEST((plan.at(1)[0].origins == std::vector<std::uint64_t>{1, 5, 9}));
  BOOST_TEST(covered(plan) == range(0, 1000));
}

BOOST_AUTO_TEST_CASE(a_makeup_round_splits_the_left_samples_into_contiguous_lists) {
  std::vector<std::uint32_t> left{7, 3, 99, 12, 5, 600, 1, 2};
  const auto plan = plan_round(three_nodes, 5, 2, data, &left);
  std::vector<std::uint32_t> in_order;
  for (const auto& [node, works] : plan)
    for (const auto& work : works) {
      BOOST_TEST(work.ranks == 0u);  // explicit lists
      in_order.insert(in_order.end(), work.indices.begin(), work.indices.end());
    }
  BOOST_TEST(in_order == left);  // nodes 1 < 5 < 9: rank order is node order here
  BOOST_TEST(batches_of(plan.at(1), data) == 2u);  // two workers with 2 samples each
}

BOOST_AUTO_TEST_CASE(the_remainder_after_some_steps_is_exactly_what_the_steps_did_not_visit) {
  const auto plan = plan_round(three_nodes, 0, 0, data, nullptr);
  const auto& work = plan.at(9);  // three partitions of 166 or 167 samples
  const auto left = remainder_of(work, {2, 0}, data);  // the third worker: no entry, 0 steps
  BOOST_TEST(left.trained_batches == 2u);
  BOOST_TEST(left.trained_samples == 64u);
  const auto first = samples_of(work[0], data);
  BOOST_TEST(std::equal(first.begin() + 64, first.end(), left.untrained.begin()));
  std::uint64_t all = 0;
  for (const auto& one : work)
    all += samples_of(one, data).size();
  BOOST_TEST(left.untrained.size() + left.trained_samples == all);
}

BOOST_AUTO_TEST_CASE(steps_past_a_partial_last_batch_leave_nothing_and_count_the_batch_once) {
  const auto plan = plan_round({{1, 1}}, 0, 0, data, nullptr);
  const auto left = remainder_of(plan.at(1), {1000}, data);
  BOOST_TEST(left.untrained.empty());
  BOOST_TEST(left.trained_samples == 1000u);
  BOOST_TEST(left.trained_batches == 32u);  // 31 full batches and one of 8
}

BOOST_AUTO_TEST_CASE(every_worker_of_a_round_is_told_the_fewest_and_most_batches_any_takes) {
  // 1000 samples over 6 workers: shares of 167 (4 ranks) and 166 (2); 32 a batch: 6 batches
  // each. 1000 over 3 workers of batch 333: 2 batches for the 334-sample rank, 1 for the others.
  for (const auto& work : plan_round(three_nodes, 0, 0, data, nullptr))
    for (const auto& one : work.second) {
      BOOST_TEST(one.common_steps == 6u);
      BOOST_TEST(one.most_steps == 6u);
    }
  const data_plan big_batches{1000, 333, 42, true};
  const auto plan = plan_round({{1, 3}}, 0, 0, big_batches, nullptr);
  BOOST_TEST(batches_of({plan.at(1)[0]}, big_batches) == 2u);
  for (const auto& one : plan.at(1)) {
    BOOST_TEST(one.common_steps == 1u);
    BOOST_TEST(one.most_steps == 2u);
  }
}
