#define BOOST_TEST_MODULE actors_stall_watch
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "strom/actors/job/stall_watch.hpp"

// The stall watch's judgement: whom the waiting workers wait for, what it does.

using namespace strom::actors;

namespace {

stalled_node node(std::uint64_t id, const std::string& name, std::uint64_t steps, double quiet,
                  std::optional<std::vector<worker_activity>> workers) {
  stalled_node n;
  n.node_id = id;
  n.node = "node " + std::to_string(id) + " (" + name + ")";
  n.round = 3;
  n.steps = steps;
  n.quiet_seconds = quiet;
  if (workers)
    n.answer = node_activity{1, id, *workers};
  return n;
}

/// A worker parked after `steps`, waiting for `origins`.
worker_activity parked(std::uint32_t worker, std::uint64_t steps,
                       std::vector<std::uint64_t> origins) {
  return {worker, 3, steps, true, true, false, std::move(origins)};
}

/// A worker in its step (not waiting for anyone).
worker_activity stepping(std::uint32_t worker, std::uint64_t steps) {
  return {worker, 3, steps, true, false, false, {}};
}

bool holds(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(names_the_silent_node_the_waiting_workers_wait_for) {
  const auto found = stall_verdict({node(1, "w1", 40, 12.0, {{parked(0, 41, {2})}}),
                                    node(2, "w2", 39, 12.5, std::nullopt),
                                    node(3, "w3", 40, 12.0, {{parked(0, 41, {2})}})});
  BOOST_REQUIRE(found);
  BOOST_TEST(found->node_id == 2u);
  BOOST_TEST(found->waiting_workers == 2u);
  BOOST_TEST(holds(found->text, "waiting for node 2 (w2): it does not answer"), found->text);
  BOOST_TEST(holds(found->text, "last reported step 39 of round 3, 12.5 s ago"), found->text);
}

BOOST_AUTO_TEST_CASE(names_the_busy_worker_of_a_node_that_answers) {
  // Node 2's worker 0 waits for its own node's clock, which its worker 1 holds back.
  const auto found = stall_verdict(
    {node(1, "w1", 40, 11.0, {{parked(0, 41, {2})}}),
     node(2, "w2", 39, 11.0, {{parked(0, 41, {2}), stepping(1, 39)}})});
  BOOST_REQUIRE(found);
  BOOST_TEST(found->node_id == 2u);
  BOOST_TEST(holds(found->text, "its worker 1 is in step 40 of round 3"), found->text);
}

BOOST_AUTO_TEST_CASE(nobody_is_named_when_every_node_answers_busy_in_its_steps) {
  BOOST_TEST(!stall_verdict({node(1, "w1", 5, 11.0, {{stepping(0, 5)}}),
                             node(2, "w2", 5, 11.0, {{stepping(0, 5)}})}));
}

BOOST_AUTO_TEST_CASE(a_silent_node_is_named_when_no_waits_name_anyone) {
  const auto found = stall_verdict({node(1, "w1", 5, 11.0, {{stepping(0, 5)}}),
                                    node(2, "w2", 5, 14.0, std::nullopt)});
  BOOST_REQUIRE(found);
  BOOST_TEST(found->node_id == 2u);
  BOOST_TEST(found->waiting_workers == 0u);
}
