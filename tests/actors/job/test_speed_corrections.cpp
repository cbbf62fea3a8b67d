#define BOOST_TEST_MODULE actors_speed_corrections
#include <boost/test/unit_test.hpp>

#include <vector>

#include "strom/actors/job/job_placement.hpp"

// When a pipeline is split again (LightDNN's dynamic partition): only when its stages'
// measured times over their predictions differ by more than the margin, and then each node's
// speed is corrected by its stage's ratio against the least drifted one.

using namespace strom::actors;

namespace {

/// Two stages predicted at 2 ms and 1 ms a minibatch, re-partitioned beyond a 25% drift.
job_placement two_stages(double margin = 0.25, std::uint32_t pipelines = 1) {
  job_placement placement;
  placement.pipelines = pipelines;
  placement.repartition_margin = margin;
  placement.stages = {{0, 1, 0, 0.002, 0}, {1, 3, 1, 0.001, 0}};
  return placement;
}

} // namespace

BOOST_AUTO_TEST_CASE(stages_off_their_predictions_alike_have_not_drifted) {
  // Both take 1.5x their prediction: a model that is off alike, not a node that slowed.
  const std::vector<double> busy{0.3, 0.15};
  BOOST_TEST(!speed_corrections(two_stages(), busy, 100).has_value());
  // 24% apart stays within the margin.
  const std::vector<double> near{0.2, 0.124};
  BOOST_TEST(!speed_corrections(two_stages(), near, 100).has_value());
}

BOOST_AUTO_TEST_CASE(a_stage_slower_than_predicted_beyond_the_margin_scales_its_node) {
  // Stage 2 took 3 ms against 1 ms predicted, stage 1 as predicted: node 2 runs at a third.
  const std::vector<double> busy{0.2, 0.3};
  const auto scale = speed_corrections(two_stages(), busy, 100);
  BOOST_REQUIRE(scale.has_value());
  BOOST_REQUIRE_EQUAL(scale->size(), 2u);
  BOOST_TEST((*scale)[0] == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST((*scale)[1] == 1.0 / 3.0, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(no_margin_several_copies_or_nothing_measured_never_re_partition) {
  const std::vector<double> busy{0.2, 0.3};
  BOOST_TEST(!speed_corrections(two_stages(0.0), busy, 100).has_value());
  BOOST_TEST(!speed_corrections(two_stages(0.25, 2), busy, 100).has_value());
  BOOST_TEST(!speed_corrections(two_stages(), busy, 0).has_value());
  const std::vector<double> idle{0.2, 0.0};
  BOOST_TEST(!speed_corrections(two_stages(), idle, 100).has_value());
  const std::vector<double> short_list{0.2};
  BOOST_TEST(!speed_corrections(two_stages(), short_list, 100).has_value());
}
