#define BOOST_TEST_MODULE codecs_threshold_encoder_from_spec
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>

#include <capnp/message.h>

#include "strom/compute/encoders/threshold_encoder_from_spec.hpp"

using namespace strom::compute;
namespace schema = strom::schema;

namespace {

/// The options made from a Sharing spec that `fill` sets up; an error's message if refused.
template <class Fill>
strom::result<threshold_encoder_options> options_from(Fill fill) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Sharing>();
  fill(spec);
  return make_threshold_encoder_options(spec.asReader());
}

/// The error message of a spec that must be refused.
template <class Fill>
std::string refusal(Fill fill) {
  auto made = options_from(fill);
  BOOST_REQUIRE(!made);
  return made.err().message;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_job_that_names_no_policy_is_calibrated) {
  auto made = options_from([](schema::Sharing::Builder) {});
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  BOOST_REQUIRE(made->calibration.has_value());
  BOOST_TEST(made->calibration->density == calibrated_threshold_options{}.density);
  BOOST_TEST(made->calibration->dense_elements == calibrated_threshold_options{}.dense_elements);
  capnp::MallocMessageBuilder message;
  auto calibrated = message.initRoot<schema::CalibratedThreshold>().asReader();
  BOOST_TEST(calibrated.getDensity() == calibrated_threshold_options{}.density);
  BOOST_TEST(calibrated.getDenseElements() == calibrated_threshold_options{}.dense_elements);
}

BOOST_AUTO_TEST_CASE(calibrated_settings_are_taken_and_checked) {
  auto made = options_from([](schema::Sharing::Builder spec) {
    auto calibrated = spec.getThreshold().initCalibrated();
    calibrated.setDensity(0.03);
    calibrated.setDenseElements(100);
  });
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  BOOST_TEST(made->calibration->density == 0.03);
  BOOST_TEST(made->calibration->dense_elements == 100u);
  const auto message = refusal([](schema::Sharing::Builder spec) {
    spec.getThreshold().initCalibrated().setDensity(0.5);
  });
  BOOST_TEST(message.find("distributed.sharing.calibrated.density: 0.5") != std::string::npos,
             message);
}

BOOST_AUTO_TEST_CASE(linear_updaters_average_the_updates_adaptive_ones_add_them) {
  capnp::MallocMessageBuilder message;
  auto job = message.initRoot<schema::Job>();
  auto sharing = job.initDistributed().initSharing();
  auto updater = job.initTraining().initUpdater();
  const auto power = [&] { return update_power(sharing.asReader(), updater.asReader()); };
  updater.setSgd();
  BOOST_TEST(power() == 1.0f);
  updater.initNesterov();
  BOOST_TEST(power() == 1.0f);
  updater.initAdam();
  BOOST_TEST(power() == 0.0f);
  updater.initAdaGrad();
  BOOST_TEST(power() == 0.0f);
  sharing.setCombine(schema::UpdateCombination::MEAN);
  BOOST_TEST(power() == 1.0f);
  sharing.setCombine(schema::UpdateCombination::SUM);
  updater.setSgd();
  BOOST_TEST(power() == 0.0f);
  // A named Deeplearning4j policy sums, as Deeplearning4j does, unless told otherwise.
  sharing.setCombine(schema::UpdateCombination::AUTO);
  sharing.getThreshold().initAdaptive();
  BOOST_TEST(power() == 0.0f);
}

BOOST_AUTO_TEST_CASE(averaged_updates_treat_the_own_update_as_any_other) {
  capnp::MallocMessageBuilder message;
  auto sharing = message.initRoot<schema::Sharing>();
  // Averaged: applied as its frame, momentum kept, whatever the two settings say.
  auto averaged = own_update_handling_of(sharing.asReader(), 1.0f);
  BOOST_TEST(!averaged.at_once);
  BOOST_TEST(!averaged.momentum_masking);
  // Summed: as the settings say (both on by default).
  auto summed = own_update_handling_of(sharing.asReader(), 0.0f);
  BOOST_TEST(summed.at_once);
  BOOST_TEST(summed.momentum_masking);
  sharing.setApplyOwnUpdate(false);
  sharing.setMomentumMasking(false);
  summed = own_update_handling_of(sharing.asReader(), 0.0f);
  BOOST_TEST(!summed.at_once);
  BOOST_TEST(!summed.momentum_masking);
}

BOOST_AUTO_TEST_CASE(a_named_adaptive_policy_has_deeplearning4j_defaults) {
  auto made = options_from([](schema::Sharing::Builder spec) { spec.getThreshold().initAdaptive(); });
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  BOOST_TEST(!made->calibration.has_value());
  const threshold_encoder_options defaults;
  BOOST_TEST(made->clip_factor == defaults.clip_factor);
  BOOST_TEST(made->clip_every == defaults.clip_every);
  BOOST_TEST(made->shake_up_every == defaults.shake_up_every);
  BOOST_TEST(made->policy.threshold() == adaptive_threshold_options{}.initial_threshold);

  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Sharing>().asReader();
  BOOST_REQUIRE(spec.getThreshold().isAdaptive());
  const adaptive_threshold_options adaptive;
  BOOST_TEST(spec.getThreshold().getAdaptive().getMinSparsity() == adaptive.min_sparsity);
  BOOST_TEST(spec.getThreshold().getAdaptive().getMaxSparsity() == adaptive.max_sparsity);
  BOOST_TEST(spec.getThreshold().getAdaptive().getDecay() == adaptive.decay_rate,
             boost::test_tools::tolerance(1e-15));
  const target_sparsity_options target;
  capnp::MallocMessageBuilder target_message;
  auto target_spec = target_message.initRoot<schema::TargetSparsityThreshold>().asReader();
  BOOST_TEST(target_spec.getInitial() == target.initial_threshold);
  BOOST_TEST(target_spec.getSparsity() == target.sparsity_target);
  capnp::MallocMessageBuilder fixed_message;
  BOOST_TEST(fixed_message.initRoot<schema::FixedThreshold>().asReader().getThreshold() ==
             fixed_threshold_options{}.threshold);
}

BOOST_AUTO_TEST_CASE(chosen_policy_and_residual_settings_are_taken) {
  auto made = options_from([](schema::Sharing::Builder spec) {
    spec.getThreshold().initFixed().setThreshold(0.25f);
    spec.setResidualClipFactor(2.0f);
    spec.setResidualClipEvery(3);
    spec.setShakeUpEvery(7);
  });
  BOOST_REQUIRE_MESSAGE(made, (made ? "" : made.err().message));
  BOOST_TEST(made->policy.threshold() == 0.25f);
  made->policy.observe(1.0);  // fixed: never moves
  BOOST_TEST(made->policy.threshold() == 0.25f);
  BOOST_TEST(made->clip_factor == 2.0f);
  BOOST_TEST(made->clip_every == 3u);
  BOOST_TEST(made->shake_up_every == 7u);
}

BOOST_AUTO_TEST_CASE(non_positive_fixed_threshold_is_refused_naming_the_field) {
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initFixed().setThreshold(-1.0f);
             }) == "distributed.sharing.fixed.threshold: -1 must be finite and > 0");
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initFixed().setThreshold(std::numeric_limits<float>::quiet_NaN());
             }).starts_with("distributed.sharing.fixed.threshold: nan"));
}

BOOST_AUTO_TEST_CASE(adaptive_band_and_decay_out_of_range_are_refused) {
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initAdaptive().setInitial(0.0f);
             }) == "distributed.sharing.adaptive.initial: 0 must be finite and > 0");
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initAdaptive().setMaxSparsity(1.5);
             }) == "distributed.sharing.adaptive.maxSparsity: 1.5 is outside [0, 1]");
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               auto adaptive = spec.getThreshold().initAdaptive();
               adaptive.setMinSparsity(0.1);
               adaptive.setMaxSparsity(0.01);
             }) == "distributed.sharing.adaptive.maxSparsity: 0.01 is below minSparsity 0.1");
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initAdaptive().setDecay(1.0);
             }) == "distributed.sharing.adaptive.decay: 1 is outside (0, 1)");
}

BOOST_AUTO_TEST_CASE(target_sparsity_out_of_range_is_refused) {
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) {
               spec.getThreshold().initTargetSparsity().setSparsity(-0.5);
             }) == "distributed.sharing.targetSparsity.sparsity: -0.5 is outside [0, 1]");
}

BOOST_AUTO_TEST_CASE(residual_clip_factor_below_one_threshold_is_refused_unless_clipping_is_off) {
  BOOST_TEST(refusal([](schema::Sharing::Builder spec) { spec.setResidualClipFactor(0.5f); }) ==
             "distributed.sharing.residualClipFactor: 0.5 must be finite and >= 1");
  auto off = options_from([](schema::Sharing::Builder spec) {
    spec.setResidualClipFactor(0.5f);
    spec.setResidualClipEvery(0);
  });
  BOOST_TEST(off.ok());
}
