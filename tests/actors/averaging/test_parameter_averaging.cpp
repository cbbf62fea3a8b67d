#define BOOST_TEST_MODULE actors_parameter_averaging
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "strom/actors/averaging/node_average.hpp"
#include "strom/actors/averaging/parameter_averaging.hpp"
#include "strom/compute/codecs/dense_codec.hpp"

using namespace strom;
using namespace strom::actors;

namespace {

constexpr std::size_t parameters = 3;
constexpr std::size_t updater_state = 2;
constexpr std::size_t elements = 1 + parameters + updater_state;

/// A node's contribution of weight `w`: parameters all `p`, updater state all `u` (sums).
std::vector<float> contribution(float w, float p, float u) { return {w, p, p, p, u, u}; }

/// The total of average `index` of `round`: `values` as a dense frame of the segment from
/// contribution element `offset`.
average_total total_of(const std::vector<float>& values, std::uint32_t round,
                       std::uint64_t index, std::uint64_t offset = 0) {
  const compute::frame_header header{1, 0, index, 0, round, offset};
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(values), {});
  BOOST_REQUIRE(built.ok());
  return {round, index, shared_frame{std::move(*built)}};
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

BOOST_AUTO_TEST_CASE(an_average_is_the_total_divided_by_its_weight) {
  // Nodes of two, one and one workers: weight 4, parameters summing to 16, state to 160.
  averaging_totals totals{elements};
  totals.start_round(0);
  BOOST_TEST(totals.next_index() == 0u);
  BOOST_TEST(!totals.complete(0));
  BOOST_TEST(totals.add(total_of(contribution(4, 16, 160), 0, 0)).ok());
  BOOST_TEST(totals.complete(0));
  std::vector<float> p(parameters), u(updater_state);
  totals.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{4, 4, 4}));
  BOOST_TEST(u == (std::vector<float>{40, 40}));
  BOOST_TEST(!totals.complete(0));
  BOOST_TEST(totals.next_index() == 1u);
}

BOOST_AUTO_TEST_CASE(a_total_in_segments_is_taken_once_every_segment_came) {
  // Parameters of one segment's size and two updater state elements: the weight and the
  // first parameters in the first segment, the last parameter and the state in the second.
  constexpr auto segment = average_segment_elements;
  const std::size_t model = segment;
  averaging_totals totals{1 + model + 2};
  totals.start_round(0);
  (void)totals.next_index();
  std::vector<float> first(segment, 6.0f);
  first.front() = 2.0f;  // the weight
  BOOST_TEST(totals.add(total_of({8, 10, 12}, 0, 0, segment)).ok());
  BOOST_TEST(!totals.complete(0));
  BOOST_TEST(totals.add(total_of(first, 0, 0)).ok());
  BOOST_TEST(totals.complete(0));
  std::vector<float> p(model), u(2);
  totals.take(0, p, u);
  BOOST_TEST(p.front() == 3.0f);
  BOOST_TEST(p[model - 2] == 3.0f);
  BOOST_TEST(p.back() == 4.0f);
  BOOST_TEST(u == (std::vector<float>{5, 6}));
  // A segment off a segment's start, or of the wrong length, is refused.
  BOOST_TEST(!totals.add(total_of({1, 2}, 0, 1, segment)).ok());
  BOOST_TEST(!totals.add(total_of({1, 2, 3}, 0, 1, 7)).ok());
}

BOOST_AUTO_TEST_CASE(without_averaged_updaters_only_the_parameters_change) {
  std::vector<float> p(parameters), u{7, 7};
  const std::vector<float> sum{2, 4, 6, 8};
  take_average_of(std::as_bytes(std::span<const float>{sum}), p, {});
  BOOST_TEST(p == (std::vector<float>{2, 3, 4}));
  BOOST_TEST(u == (std::vector<float>{7, 7}));
}

BOOST_AUTO_TEST_CASE(a_total_of_another_round_is_dropped_and_a_new_round_starts_at_index_0) {
  averaging_totals totals{elements};
  totals.start_round(4);
  (void)totals.next_index();
  BOOST_TEST(totals.add(total_of(contribution(1, 1, 1), 3, 0)).ok());  // late: dropped
  BOOST_TEST(!totals.complete(0));
  totals.start_round(5);
  BOOST_TEST(totals.next_index() == 0u);
  BOOST_TEST(totals.add(total_of(contribution(2, 10, 10), 5, 0)).ok());
  std::vector<float> p(parameters), u(updater_state);
  totals.take(0, p, u);
  BOOST_TEST(p == (std::vector<float>{5, 5, 5}));
}

BOOST_AUTO_TEST_CASE(a_total_that_is_no_sum_of_this_models_contributions_is_refused) {
  averaging_totals totals{elements};
  totals.start_round(0);
  const auto wrong_size = totals.add(total_of({1, 2, 3}, 0, 0));
  BOOST_REQUIRE(!wrong_size.ok());
  BOOST_TEST(wrong_size.err().message.find("3 elements from 0") != std::string::npos);
  BOOST_TEST(!totals.complete(0));
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
