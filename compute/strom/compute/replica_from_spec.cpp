#include "strom/compute/replica_from_spec.hpp"

#include <fmt/format.h>

#include <cmath>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

namespace strom::compute {

namespace {

/// Stream numbers for derive_seed: separate sequences for initial weights and dropout.
constexpr std::uint64_t dropout_stream = 1'000'000;

} // namespace

result<std::unique_ptr<replica>> make_replica(schema::Job::Reader job, std::uint32_t worker) {
  auto training = job.getTraining();
  const std::uint64_t seed = training.getSeed();
  auto net = make_model(job.getNetwork(), derive_seed(seed, dropout_stream + worker));
  if (!net)
    return net.err();
  auto rule = make_updater(training.getUpdater());
  if (!rule)
    return rule.err();
  auto schedule = make_schedule(training.getUpdater());
  if (!schedule)
    return schedule.err();
  const float l2 = training.getL2();
  if (!std::isfinite(l2) || l2 < 0.0f)
    return error{fmt::format("training.l2: {} must be finite and >= 0", l2)};
  if (training.getBatchSize() == 0)
    return error{"training.batchSize: must be at least 1"};
  (*net)->initialize(seed);
  (*net)->reserve(training.getBatchSize());
  return std::make_unique<replica>(std::move(net).value(),
                                   replica_options{std::move(rule).value(),
                                                   std::move(schedule).value(), l2});
}

} // namespace strom::compute
