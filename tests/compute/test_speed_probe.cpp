#define BOOST_TEST_MODULE compute_speed_probe
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "strom/compute/partition/speed_probe.hpp"

// The join-time compute benchmark that the speed-aware partition reads.

using namespace strom::compute;

BOOST_AUTO_TEST_CASE(the_rate_is_the_reference_layers_operations_over_its_fastest_round) {
  // A clock that moves 2 ms between readings, then 1 ms once (reading 9 ends round 4, after
  // the warm-up's one reading and two a round): the fastest round counts.
  double now = 0.0;
  int readings = 0;
  const auto clock = [&] {
    now += (++readings == 9) ? 0.001 : 0.002;
    return now;
  };
  const double operations = 3.0 * 2.0 * 64 * 784 * 256;
  BOOST_TEST(measure_compute_rate(clock, 5) == operations / 0.001,
             boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(a_real_clock_gives_a_finite_positive_rate) {
  const auto start = std::chrono::steady_clock::now();
  const double rate = measure_compute_rate([start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  BOOST_TEST_MESSAGE("measured " << rate / 1e9 << " GFLOP/s");
  BOOST_TEST(std::isfinite(rate));
  BOOST_TEST(rate > 1e8);  // any machine that trains does more than 0.1 GFLOP/s
}

BOOST_AUTO_TEST_CASE(a_probe_without_a_clock_or_rounds_is_refused) {
  BOOST_CHECK_THROW(measure_compute_rate({}), std::invalid_argument);
  BOOST_CHECK_THROW(measure_compute_rate([] { return 0.0; }, 0), std::invalid_argument);
}
