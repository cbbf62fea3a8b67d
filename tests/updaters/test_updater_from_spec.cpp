#define BOOST_TEST_MODULE updaters_updater_from_spec
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/schema.h>

#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/rms_prop.hpp"
#include "strom/compute/updaters/sgd.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

using namespace strom::compute;
namespace schema = strom::schema;

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float infinity = std::numeric_limits<float>::infinity();

/// Builds an Updater spec, lets `fill` set its fields, and returns what make_updater made.
template <class Fill>
std::unique_ptr<updater> updater_from(Fill fill) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  fill(spec);
  auto made = make_updater(spec.asReader());
  BOOST_REQUIRE_MESSAGE(made.ok(), (made.ok() ? "" : made.err().message));
  return std::move(made).value();
}

/// The message with which make_updater refuses the spec that `fill` writes.
template <class Fill>
std::string updater_error(Fill fill) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  fill(spec);
  const auto made = make_updater(spec.asReader());
  BOOST_REQUIRE(!made.ok());
  return made.err().message;
}

/// What make_schedule makes of the spec that `fill` writes.
template <class Fill>
learning_rate_schedule schedule_from(Fill fill) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  fill(spec);
  auto made = make_schedule(spec.asReader());
  BOOST_REQUIRE_MESSAGE(made.ok(), (made.ok() ? "" : made.err().message));
  return made.value();
}

/// The message with which make_schedule refuses the spec that `fill` writes.
template <class Fill>
std::string schedule_error(Fill fill) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::Updater>();
  fill(spec);
  const auto made = make_schedule(spec.asReader());
  BOOST_REQUIRE(!made.ok());
  return made.err().message;
}

/// The one segment of an Updater message whose union is `kind` and whose every pointer
/// points far past the end of the segment, as a corrupted or hostile job would.
kj::Array<capnp::word> updater_with_dangling_pointers(schema::Updater::Which kind) {
  const auto node = capnp::Schema::from<schema::Updater>().getProto().getStruct();
  const std::uint64_t data_words = node.getDataWordCount();
  const std::uint64_t pointers = node.getPointerCount();
  // Struct pointer (Cap'n Proto encoding spec): bits 0-1 kind 0, bits 2-31 the offset in
  // words from the pointer's end, bits 32-47 data words, bits 48-63 pointer count.
  auto struct_pointer = [](std::uint64_t offset, std::uint64_t data, std::uint64_t count) {
    return (offset << 2) | (data << 32) | (count << 48);
  };
  std::vector<std::uint64_t> words{struct_pointer(0, data_words, pointers)};
  words.resize(1 + data_words, 0);
  const auto discriminant = static_cast<std::uint64_t>(kind);
  words[1 + node.getDiscriminantOffset() / 4] |= discriminant
                                                  << (16 * (node.getDiscriminantOffset() % 4));
  words.resize(1 + data_words + pointers, struct_pointer(1000, 1, 0));
  auto message = kj::heapArray<capnp::word>(words.size());
  std::memcpy(static_cast<void*>(message.begin()), words.data(),
              words.size() * sizeof(std::uint64_t));
  return message;
}

} // namespace

// -- building each updater ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_empty_spec_builds_sgd) {
  const auto made = updater_from([](schema::Updater::Builder) {});
  BOOST_TEST(dynamic_cast<const sgd_updater*>(made.get()) != nullptr);
}

BOOST_AUTO_TEST_CASE(builds_momentum_with_its_momentum) {
  const auto made =
      updater_from([](schema::Updater::Builder spec) { spec.initMomentum().setMomentum(0.8f); });
  const auto* momentum = dynamic_cast<const momentum_updater*>(made.get());
  BOOST_REQUIRE(momentum != nullptr);
  BOOST_TEST(momentum->options().momentum == 0.8f);
}

BOOST_AUTO_TEST_CASE(builds_nesterov_with_its_momentum) {
  const auto made =
      updater_from([](schema::Updater::Builder spec) { spec.initNesterov().setMomentum(0.5f); });
  const auto* nesterov = dynamic_cast<const nesterov_updater*>(made.get());
  BOOST_REQUIRE(nesterov != nullptr);
  BOOST_TEST(nesterov->options().momentum == 0.5f);
}

BOOST_AUTO_TEST_CASE(builds_adam_with_its_options) {
  const auto made = updater_from([](schema::Updater::Builder spec) {
    auto adam = spec.initAdam();
    adam.setBeta1(0.8f);
    adam.setBeta2(0.99f);
    adam.setEpsilon(1e-6f);
  });
  const auto* adam = dynamic_cast<const adam_updater*>(made.get());
  BOOST_REQUIRE(adam != nullptr);
  BOOST_TEST(adam->options().beta1 == 0.8f);
  BOOST_TEST(adam->options().beta2 == 0.99f);
  BOOST_TEST(adam->options().epsilon == 1e-6f);
}

BOOST_AUTO_TEST_CASE(builds_rms_prop_with_its_options) {
  const auto made = updater_from([](schema::Updater::Builder spec) {
    auto rms_prop = spec.initRmsProp();
    rms_prop.setDecay(0.9f);
    rms_prop.setEpsilon(1e-7f);
  });
  const auto* rms_prop = dynamic_cast<const rms_prop_updater*>(made.get());
  BOOST_REQUIRE(rms_prop != nullptr);
  BOOST_TEST(rms_prop->options().decay == 0.9f);
  BOOST_TEST(rms_prop->options().epsilon == 1e-7f);
}

BOOST_AUTO_TEST_CASE(builds_ada_grad_with_its_epsilon) {
  const auto made =
      updater_from([](schema::Updater::Builder spec) { spec.initAdaGrad().setEpsilon(1e-4f); });
  const auto* ada_grad = dynamic_cast<const ada_grad_updater*>(made.get());
  BOOST_REQUIRE(ada_grad != nullptr);
  BOOST_TEST(ada_grad->options().epsilon == 1e-4f);
}

BOOST_AUTO_TEST_CASE(schema_defaults_are_the_option_defaults) {
  const auto adam = updater_from([](schema::Updater::Builder spec) { spec.initAdam(); });
  const adam_options adam_defaults;
  BOOST_TEST(dynamic_cast<const adam_updater&>(*adam).options().beta1 == adam_defaults.beta1);
  BOOST_TEST(dynamic_cast<const adam_updater&>(*adam).options().beta2 == adam_defaults.beta2);
  BOOST_TEST(dynamic_cast<const adam_updater&>(*adam).options().epsilon == adam_defaults.epsilon);

  const auto rms_prop = updater_from([](schema::Updater::Builder spec) { spec.initRmsProp(); });
  const rms_prop_options rms_prop_defaults;
  BOOST_TEST(dynamic_cast<const rms_prop_updater&>(*rms_prop).options().decay ==
             rms_prop_defaults.decay);
  BOOST_TEST(dynamic_cast<const rms_prop_updater&>(*rms_prop).options().epsilon ==
             rms_prop_defaults.epsilon);

  const auto ada_grad = updater_from([](schema::Updater::Builder spec) { spec.initAdaGrad(); });
  BOOST_TEST(dynamic_cast<const ada_grad_updater&>(*ada_grad).options().epsilon ==
             ada_grad_options{}.epsilon);

  const auto momentum = updater_from([](schema::Updater::Builder spec) { spec.initMomentum(); });
  BOOST_TEST(dynamic_cast<const momentum_updater&>(*momentum).options().momentum ==
             momentum_options{}.momentum);
}

// -- refusing bad updater options ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(refuses_adam_beta1_of_one_and_a_half) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) { spec.initAdam().setBeta1(1.5f); }) ==
             "training.updater.adam.beta1: 1.5 is outside [0, 1)");
}

BOOST_AUTO_TEST_CASE(refuses_adam_beta2_of_one) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) { spec.initAdam().setBeta2(1.0f); }) ==
             "training.updater.adam.beta2: 1 is outside [0, 1)");
}

BOOST_AUTO_TEST_CASE(refuses_adam_epsilon_of_zero) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initAdam().setEpsilon(0.0f);
             }) == "training.updater.adam.epsilon: 0 must be > 0");
}

BOOST_AUTO_TEST_CASE(refuses_a_negative_momentum) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initMomentum().setMomentum(-0.5f);
             }) == "training.updater.momentum.momentum: -0.5 is outside [0, 1)");
}

BOOST_AUTO_TEST_CASE(refuses_a_nan_nesterov_momentum) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initNesterov().setMomentum(nan);
             }) == "training.updater.nesterov.momentum: nan is not a finite number");
}

BOOST_AUTO_TEST_CASE(refuses_rms_prop_decay_of_one) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initRmsProp().setDecay(1.0f);
             }) == "training.updater.rmsProp.decay: 1 is outside [0, 1)");
}

BOOST_AUTO_TEST_CASE(refuses_an_infinite_rms_prop_epsilon) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initRmsProp().setEpsilon(infinity);
             }) == "training.updater.rmsProp.epsilon: inf is not a finite number");
}

BOOST_AUTO_TEST_CASE(refuses_a_negative_ada_grad_epsilon) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               spec.initAdaGrad().setEpsilon(-1.0f);
             }) == "training.updater.adaGrad.epsilon: -1 must be > 0");
}

BOOST_AUTO_TEST_CASE(refuses_an_updater_kind_from_a_newer_schema) {
  BOOST_TEST(updater_error([](schema::Updater::Builder spec) {
               // Write discriminant 42 where the union's discriminant lives.
               const auto offset = capnp::Schema::from<schema::Updater>()
                                       .getProto()
                                       .getStruct()
                                       .getDiscriminantOffset();
               auto data = capnp::AnyStruct::Builder(kj::mv(spec)).getDataSection();
               BOOST_REQUIRE(data.size() >= 2 * offset + 2);
               data[2 * offset] = static_cast<kj::byte>(42);
               data[2 * offset + 1] = 0;
             }) == "training.updater: unknown updater kind 42");
}

BOOST_AUTO_TEST_CASE(refuses_a_malformed_message_instead_of_throwing) {
  const auto words = updater_with_dangling_pointers(schema::Updater::ADAM);
  const kj::ArrayPtr<const capnp::word> segments[] = {words};
  capnp::SegmentArrayMessageReader reader(segments);
  const auto made = make_updater(reader.getRoot<schema::Updater>());
  BOOST_REQUIRE(!made.ok());
  BOOST_TEST(made.err().message.starts_with("training.updater: malformed message: "),
             made.err().message);
}

// -- building schedules -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_empty_spec_builds_a_fixed_rate_of_0_01) {
  BOOST_TEST((schedule_from([](schema::Updater::Builder) {}) ==
              learning_rate_schedule::fixed(0.01f)));
}

BOOST_AUTO_TEST_CASE(builds_a_step_schedule) {
  const auto schedule = schedule_from([](schema::Updater::Builder spec) {
    spec.setLearningRate(0.1f);
    auto schedule = spec.initSchedule();
    schedule.setUnit(schema::ScheduleUnit::EPOCH);
    auto step = schedule.initStep();
    step.setDecay(0.5f);
    step.setEvery(3);
  });
  BOOST_TEST((schedule == learning_rate_schedule::step(0.1f, 0.5f, 3, schedule_unit::epoch)));
}

BOOST_AUTO_TEST_CASE(builds_an_exponential_schedule) {
  const auto schedule = schedule_from([](schema::Updater::Builder spec) {
    spec.setLearningRate(0.2f);
    spec.initSchedule().initExponential().setGamma(0.9f);
  });
  BOOST_TEST((schedule ==
              learning_rate_schedule::exponential(0.2f, 0.9f, schedule_unit::iteration)));
}

// -- refusing bad rates and schedules -----------------------------------------------------

BOOST_AUTO_TEST_CASE(refuses_a_malformed_schedule_instead_of_throwing) {
  const auto words = updater_with_dangling_pointers(schema::Updater::SGD);
  const kj::ArrayPtr<const capnp::word> segments[] = {words};
  capnp::SegmentArrayMessageReader reader(segments);
  const auto made = make_schedule(reader.getRoot<schema::Updater>());
  BOOST_REQUIRE(!made.ok());
  BOOST_TEST(made.err().message.starts_with("training.updater: malformed message: "),
             made.err().message);
}

BOOST_AUTO_TEST_CASE(refuses_a_negative_learning_rate) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) { spec.setLearningRate(-0.1f); }) ==
             "training.updater.learningRate: -0.1 must be > 0");
}

BOOST_AUTO_TEST_CASE(refuses_a_zero_learning_rate) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) { spec.setLearningRate(0.0f); }) ==
             "training.updater.learningRate: 0 must be > 0");
}

BOOST_AUTO_TEST_CASE(refuses_a_nan_learning_rate) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) { spec.setLearningRate(nan); }) ==
             "training.updater.learningRate: nan is not a finite number");
}

BOOST_AUTO_TEST_CASE(refuses_an_infinite_learning_rate) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.setLearningRate(infinity);
             }) == "training.updater.learningRate: inf is not a finite number");
}

BOOST_AUTO_TEST_CASE(refuses_a_step_schedule_with_a_zero_period) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.initSchedule().initStep().setEvery(0);
             }) == "training.updater.schedule.step.every: must be >= 1, found 0");
}

BOOST_AUTO_TEST_CASE(refuses_a_step_decay_of_zero) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.initSchedule().initStep().setDecay(0.0f);
             }) == "training.updater.schedule.step.decay: 0 is outside (0, 1]");
}

BOOST_AUTO_TEST_CASE(refuses_a_growing_exponential_gamma) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.initSchedule().initExponential().setGamma(1.5f);
             }) == "training.updater.schedule.exponential.gamma: 1.5 is outside (0, 1]");
}

BOOST_AUTO_TEST_CASE(refuses_a_nan_exponential_gamma) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.initSchedule().initExponential().setGamma(nan);
             }) == "training.updater.schedule.exponential.gamma: nan is not a finite number");
}

BOOST_AUTO_TEST_CASE(refuses_a_schedule_unit_from_a_newer_schema) {
  BOOST_TEST(schedule_error([](schema::Updater::Builder spec) {
               spec.initSchedule().setUnit(static_cast<schema::ScheduleUnit>(7));
             }) == "training.updater.schedule.unit: unknown unit 7");
}
