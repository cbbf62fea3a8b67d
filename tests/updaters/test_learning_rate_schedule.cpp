#define BOOST_TEST_MODULE updaters_learning_rate_schedule
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "strom/compute/updaters/learning_rate_schedule.hpp"

using namespace strom::compute;

namespace {
// Relative tolerance in percent (Boost's CHECK_CLOSE): float arithmetic, about 1e-5.
constexpr float tolerance_percent = 1e-3f;
} // namespace

BOOST_AUTO_TEST_CASE(fixed_rate_never_changes) {
  const auto schedule = learning_rate_schedule::fixed(0.05f);
  BOOST_TEST(schedule.rate_at(0, 0) == 0.05f);
  BOOST_TEST(schedule.rate_at(12345, 7) == 0.05f);
  BOOST_TEST(schedule.rate_at(std::numeric_limits<std::uint64_t>::max(),
                              std::numeric_limits<std::uint32_t>::max()) == 0.05f);
}

BOOST_AUTO_TEST_CASE(step_by_iteration_decays_every_period_and_ignores_the_epoch) {
  const auto schedule = learning_rate_schedule::step(0.1f, 0.5f, 3, schedule_unit::iteration);
  BOOST_CHECK_CLOSE(schedule.rate_at(0, 4), 0.1f, tolerance_percent);    // 0.1 * 0.5^0
  BOOST_CHECK_CLOSE(schedule.rate_at(2, 4), 0.1f, tolerance_percent);    // floor(2/3) = 0
  BOOST_CHECK_CLOSE(schedule.rate_at(3, 0), 0.05f, tolerance_percent);   // floor(3/3) = 1
  BOOST_CHECK_CLOSE(schedule.rate_at(7, 0), 0.025f, tolerance_percent);  // floor(7/3) = 2
  BOOST_CHECK_CLOSE(schedule.rate_at(9, 0), 0.0125f, tolerance_percent); // 0.1 * 0.5^3
}

BOOST_AUTO_TEST_CASE(step_by_epoch_decays_with_epochs_and_ignores_the_iteration) {
  const auto schedule = learning_rate_schedule::step(0.1f, 0.5f, 3, schedule_unit::epoch);
  BOOST_CHECK_CLOSE(schedule.rate_at(1000, 0), 0.1f, tolerance_percent);   // floor(0/3) = 0
  BOOST_CHECK_CLOSE(schedule.rate_at(1000, 2), 0.1f, tolerance_percent);   // floor(2/3) = 0
  BOOST_CHECK_CLOSE(schedule.rate_at(0, 3), 0.05f, tolerance_percent);     // floor(3/3) = 1
  BOOST_CHECK_CLOSE(schedule.rate_at(5, 6), 0.025f, tolerance_percent);    // floor(6/3) = 2
}

BOOST_AUTO_TEST_CASE(exponential_by_iteration_multiplies_by_gamma_each_step) {
  const auto schedule = learning_rate_schedule::exponential(0.1f, 0.9f, schedule_unit::iteration);
  BOOST_CHECK_CLOSE(schedule.rate_at(0, 3), 0.1f, tolerance_percent);         // 0.1 * 0.9^0
  BOOST_CHECK_CLOSE(schedule.rate_at(1, 3), 0.09f, tolerance_percent);        // 0.1 * 0.9
  BOOST_CHECK_CLOSE(schedule.rate_at(2, 0), 0.081f, tolerance_percent);       // 0.1 * 0.81
  BOOST_CHECK_CLOSE(schedule.rate_at(10, 0), 0.0348678f, tolerance_percent);  // 0.1 * 0.3486784
}

BOOST_AUTO_TEST_CASE(exponential_by_epoch_multiplies_by_gamma_each_epoch) {
  const auto schedule = learning_rate_schedule::exponential(0.1f, 0.9f, schedule_unit::epoch);
  BOOST_CHECK_CLOSE(schedule.rate_at(500, 0), 0.1f, tolerance_percent);
  BOOST_CHECK_CLOSE(schedule.rate_at(500, 1), 0.09f, tolerance_percent);
  BOOST_CHECK_CLOSE(schedule.rate_at(0, 2), 0.081f, tolerance_percent);
}

BOOST_AUTO_TEST_CASE(describes_its_kind_unit_and_factors) {
  const auto schedule = learning_rate_schedule::step(0.2f, 0.3f, 4, schedule_unit::epoch);
  BOOST_TEST((schedule.kind() == schedule_kind::step));
  BOOST_TEST((schedule.unit() == schedule_unit::epoch));
  BOOST_TEST(schedule.initial_rate() == 0.2f);
  BOOST_TEST(schedule.factor() == 0.3f);
  BOOST_TEST(schedule.every() == 4u);
}

BOOST_AUTO_TEST_CASE(step_with_a_zero_period_is_refused) {
  BOOST_CHECK_THROW(learning_rate_schedule::step(0.1f, 0.5f, 0, schedule_unit::iteration),
                    std::invalid_argument);
}
