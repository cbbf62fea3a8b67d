#include "strom/compute/updaters/updater_from_spec.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <kj/exception.h>

#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/nesterov.hpp"
#include "strom/compute/updaters/rms_prop.hpp"
#include "strom/compute/updaters/sgd.hpp"

namespace strom::compute {

namespace {

result<void> require_finite(std::string_view path, float value) {
  if (!std::isfinite(value))
    return error{fmt::format("{}: {} is not a finite number", path, value)};
  return success();
}

/// For rates and epsilons.
result<void> require_positive(std::string_view path, float value) {
  if (auto finite = require_finite(path, value); !finite)
    return finite;
  if (!(value > 0.0f))
    return error{fmt::format("{}: {} must be > 0", path, value)};
  return success();
}

/// For moving-average decays (momentum, betas, RMSProp decay): 1 would never forget.
result<void> require_in_zero_to_one(std::string_view path, float value) {
  if (auto finite = require_finite(path, value); !finite)
    return finite;
  if (!(value >= 0.0f && value < 1.0f))
    return error{fmt::format("{}: {} is outside [0, 1)", path, value)};
  return success();
}

/// For schedule factors: 0 would stop training, above 1 the rate would grow.
result<void> require_shrink_factor(std::string_view path, float value) {
  if (auto finite = require_finite(path, value); !finite)
    return finite;
  if (!(value > 0.0f && value <= 1.0f))
    return error{fmt::format("{}: {} is outside (0, 1]", path, value)};
  return success();
}

result<momentum_options> read_momentum(schema::Momentum::Reader spec, std::string_view path) {
  const momentum_options options{.momentum = spec.getMomentum()};
  if (auto ok = require_in_zero_to_one(fmt::format("{}.momentum", path), options.momentum); !ok)
    return ok.err();
  return options;
}

result<adam_options> read_adam(schema::Adam::Reader spec) {
  const adam_options options{
      .beta1 = spec.getBeta1(), .beta2 = spec.getBeta2(), .epsilon = spec.getEpsilon()};
  if (auto ok = require_in_zero_to_one("training.updater.adam.beta1", options.beta1); !ok)
    return ok.err();
  if (auto ok = require_in_zero_to_one("training.updater.adam.beta2", options.beta2); !ok)
    return ok.err();
  if (auto ok = require_positive("training.updater.adam.epsilon", options.epsilon); !ok)
    return ok.err();
  return options;
}

result<rms_prop_options> read_rms_prop(schema::RmsProp::Reader spec) {
  const rms_prop_options options{.decay = spec.getDecay(), .epsilon = spec.getEpsilon()};
  if (auto ok = require_in_zero_to_one("training.updater.rmsProp.decay", options.decay); !ok)
    return ok.err();
  if (auto ok = require_positive("training.updater.rmsProp.epsilon", options.epsilon); !ok)
    return ok.err();
  return options;
}

result<ada_grad_options> read_ada_grad(schema::AdaGrad::Reader spec) {
  const ada_grad_options options{.epsilon = spec.getEpsilon()};
  if (auto ok = require_positive("training.updater.adaGrad.epsilon", options.epsilon); !ok)
    return ok.err();
  return options;
}

/// Builds updater U from validated options, or passes the validation error on.
template <class U, class Options>
result<std::unique_ptr<updater>> build(const result<Options>& options) {
  if (!options)
    return options.err();
  return std::unique_ptr<updater>{std::make_unique<U>(*options)};
}

result<schedule_unit> read_unit(schema::ScheduleUnit unit) {
  switch (unit) {
    case schema::ScheduleUnit::ITERATION:
      return schedule_unit::iteration;
    case schema::ScheduleUnit::EPOCH:
      return schedule_unit::epoch;
  }
  // A job written against a newer schema.
  return error{fmt::format("training.updater.schedule.unit: unknown unit {}",
                           static_cast<unsigned>(unit))};
}

result<learning_rate_schedule> read_schedule(schema::Updater::Reader spec) {
  const float rate = spec.getLearningRate();
  if (auto ok = require_positive("training.updater.learningRate", rate); !ok)
    return ok.err();
  const schema::Schedule::Reader schedule = spec.getSchedule();
  const result<schedule_unit> unit = read_unit(schedule.getUnit());
  if (!unit)
    return unit.err();
  switch (schedule.which()) {
    case schema::Schedule::FIXED:
      return learning_rate_schedule::fixed(rate);
    case schema::Schedule::STEP: {
      const schema::StepSchedule::Reader step = schedule.getStep();
      if (auto ok = require_shrink_factor("training.updater.schedule.step.decay", step.getDecay());
          !ok)
        return ok.err();
      if (step.getEvery() < 1)
        return error{fmt::format("training.updater.schedule.step.every: must be >= 1, found {}",
                                 step.getEvery())};
      return learning_rate_schedule::step(rate, step.getDecay(), step.getEvery(), *unit);
    }
    case schema::Schedule::EXPONENTIAL: {
      const float gamma = schedule.getExponential().getGamma();
      if (auto ok = require_shrink_factor("training.updater.schedule.exponential.gamma", gamma);
          !ok)
        return ok.err();
      return learning_rate_schedule::exponential(rate, gamma, *unit);
    }
  }
  return error{fmt::format("training.updater.schedule: unknown schedule kind {}",
                           static_cast<unsigned>(schedule.which()))};
}

result<std::unique_ptr<updater>> read_updater(schema::Updater::Reader spec) {
  switch (spec.which()) {
    case schema::Updater::SGD:
      return std::unique_ptr<updater>{std::make_unique<sgd_updater>()};
    case schema::Updater::MOMENTUM:
      return build<momentum_updater>(
          read_momentum(spec.getMomentum(), "training.updater.momentum"));
    case schema::Updater::NESTEROV:
      return build<nesterov_updater>(
          read_momentum(spec.getNesterov(), "training.updater.nesterov"));
    case schema::Updater::ADAM:
      return build<adam_updater>(read_adam(spec.getAdam()));
    case schema::Updater::RMS_PROP:
      return build<rms_prop_updater>(read_rms_prop(spec.getRmsProp()));
    case schema::Updater::ADA_GRAD:
      return build<ada_grad_updater>(read_ada_grad(spec.getAdaGrad()));
  }
  return error{fmt::format("training.updater: unknown updater kind {}",
                           static_cast<unsigned>(spec.which()))};
}

/// Cap'n Proto throws on a malformed message (bad pointers, too deep): that is bad input.
template <class T, class Read>
result<T> guard_malformed(Read read, schema::Updater::Reader spec) {
  try {
    return read(spec);
  } catch (const kj::Exception& e) {
    return error{fmt::format("training.updater: malformed message: {}", e.getDescription().cStr())};
  }
}

} // namespace

result<std::unique_ptr<updater>> make_updater(schema::Updater::Reader spec) {
  return guard_malformed<std::unique_ptr<updater>>(read_updater, spec);
}

result<learning_rate_schedule> make_schedule(schema::Updater::Reader spec) {
  return guard_malformed<learning_rate_schedule>(read_schedule, spec);
}

} // namespace strom::compute
