#define BOOST_TEST_MODULE actors_compute_slowdown
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "strom/actors/worker/compute_slowdown.hpp"

using namespace strom::actors;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(a_node_at_half_speed_waits_as_long_as_it_computed) {
  BOOST_TEST(slowdown_wait(0.5, caf::timespan{10ms}).count() == caf::timespan{10ms}.count());
}

BOOST_AUTO_TEST_CASE(a_node_at_a_quarter_speed_waits_three_times_as_long) {
  BOOST_TEST(slowdown_wait(0.25, caf::timespan{4ms}).count() == caf::timespan{12ms}.count());
}

BOOST_AUTO_TEST_CASE(a_node_at_full_speed_does_not_wait) {
  BOOST_TEST(slowdown_wait(full_speed, caf::timespan{10ms}).count() == 0);
}

BOOST_AUTO_TEST_CASE(a_drifting_node_keeps_its_factor_until_the_drift_s_epoch) {
  const node_speed steady{0.5};
  BOOST_TEST(steady.at(0) == 0.5);
  BOOST_TEST(steady.at(1000) == 0.5);
  const node_speed drifting{1.0, speed_drift{0.25, 2}};
  BOOST_TEST(drifting.at(0) == 1.0);
  BOOST_TEST(drifting.at(1) == 1.0);
  BOOST_TEST(drifting.at(2) == 0.25);
  BOOST_TEST(drifting.at(9) == 0.25);
}
