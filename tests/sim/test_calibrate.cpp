#define BOOST_TEST_MODULE sim_calibrate
#include <boost/test/unit_test.hpp>

#include "strom/runtime/sim/calibrate.hpp"
#include "strom/runtime/sim/calibration.hpp"
#include "support/small_fashion_job.hpp"

// Calibration measures a real job with the real compute library and writes what it read back.

using namespace strom::runtime::sim;

namespace {

/// A short calibration of the small Fashion-MNIST job, read back from its text.
calibration_table calibrated() {
  calibrate_options quick{0.2, 0.3, 0.05, 0.02};
  auto measured = calibrate(strom::testing::small_fashion_job(), quick);
  BOOST_REQUIRE_MESSAGE(measured, (measured ? "" : measured.err().message));
  const auto text = to_text((*measured)->getRoot<strom::schema::Calibration>().asReader());
  auto table = parse_calibration(text, "calibrated");
  BOOST_REQUIRE_MESSAGE(table, (table ? "" : table.err().message));
  return *table;
}

} // namespace

BOOST_AUTO_TEST_CASE(calibration_measures_the_job_and_reads_back) {
  const auto table = calibrated();
  BOOST_TEST(table.base.parameters == 784u * 64 + 64 + 64 * 10 + 10);
  BOOST_TEST(table.base.batch_size == 64u);
  BOOST_TEST(table.base.samples_per_epoch == 60000u);
  BOOST_TEST(table.base.step_seconds > 0);
  BOOST_TEST(table.measured_density > 0);
  BOOST_TEST(table.measured_density <= 1);
  BOOST_TEST(table.base.tls_seal_bytes_per_second > 0);
  BOOST_TEST(table.base.tls_open_bytes_per_second > 0);
}

BOOST_AUTO_TEST_CASE(frames_grow_with_density_until_the_bitmap_caps_them) {
  const auto table = calibrated();
  BOOST_REQUIRE(table.points.size() == 4u);
  for (std::size_t i = 1; i < table.points.size(); ++i)
    BOOST_TEST(table.points[i].frame_bytes > table.points[i - 1].frame_bytes);
  // At 10% the bitmap (2 bits an element) is smaller than 4-byte indices would be.
  const double elements = static_cast<double>(table.base.parameters);
  BOOST_TEST(static_cast<double>(table.points.back().frame_bytes) < 0.1 * elements * 4);
}

BOOST_AUTO_TEST_CASE(costs_between_two_densities_are_interpolated) {
  calibration_table table;
  table.base.step_seconds = 1;
  table.measured_density = 0.005;
  table.points = {{0.001, 1e-4, 2e-6, 1000}, {0.01, 1e-3, 2e-5, 10000}};
  const auto at = costs_at(table, 0);  // the measured density: halfway
  BOOST_TEST(at.density == 0.005);
  BOOST_TEST(at.frame_bytes == 5000u);  // 1000 + 4/9 of 9000
  BOOST_TEST(costs_at(table, 0.5).frame_bytes == 10000u);   // held at the ends
  BOOST_TEST(costs_at(table, 1e-6).frame_bytes == 1000u);
}

BOOST_AUTO_TEST_CASE(a_calibration_without_densities_is_refused_naming_the_field) {
  auto table = parse_calibration("(stepSeconds = 0.01, batchSize = 64, samplesPerEpoch = 100)",
                                 "empty.calibration");
  BOOST_REQUIRE(!table);
  BOOST_TEST(table.err().message.find("empty.calibration: densities: none measured")
             != std::string::npos);
}
