#include "strom/compute/memory_estimate.hpp"

#include <fmt/format.h>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/saturating.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

namespace strom::compute {

namespace {

/// Any seed: the seed changes values, not sizes.
constexpr std::uint64_t sizing_seed = 0;

std::uint64_t float_bytes(std::uint64_t floats) { return saturating_mul(floats, sizeof(float)); }

} // namespace

std::uint64_t memory_estimate::per_worker() const noexcept {
  std::uint64_t sum = 0;
  for (auto part : {parameters, gradients, model_state, updater_state, sharing, batch})
    sum = saturating_add(sum, part);
  return sum;
}

std::uint64_t memory_estimate::total() const noexcept {
  return saturating_mul(per_worker(), workers);
}

result<memory_estimate> estimate_memory(schema::Job::Reader job,
                                        const memory_estimate_options& options) {
  auto training = job.getTraining();
  if (auto ok = check_training(training); !ok)
    return ok.err();
  auto net = make_layers(job.getNetwork(), sizing_seed);
  if (!net)
    return net.err();
  auto rule = make_updater(training.getUpdater());
  if (!rule)
    return rule.err();

  std::uint64_t parameter_count = 0;
  std::uint64_t state_count = 0;
  for (const auto& l : net->layers) {
    parameter_count = saturating_add(parameter_count, l->parameter_count());
    state_count = saturating_add(state_count, l->state_count());
  }
  const std::uint32_t batch = training.getBatchSize();
  memory_estimate estimate;
  estimate.parameters = float_bytes(parameter_count);
  estimate.gradients = float_bytes(parameter_count);
  estimate.model_state = float_bytes(state_count);
  estimate.updater_state = float_bytes((*rule)->state_size(parameter_count));
  if (options.shares_updates)  // threshold_encoder: the residual and a bitmap's words
    estimate.sharing = saturating_add(float_bytes(parameter_count),
                                      saturating_mul(bitmap_words(parameter_count),
                                                     sizeof(std::uint32_t)));
  // batch_loader: one batch of features and its labels.
  const std::uint64_t fed = saturating_add(float_bytes(saturating_mul(net->input.size(), batch)),
                                           saturating_mul(batch, sizeof(std::int32_t)));
  estimate.batch = saturating_add(batch_memory_bytes(net->input, net->layers, batch), fed);
  estimate.batch_size = batch;
  estimate.workers = options.workers;
  return estimate;
}

std::string to_string(const memory_estimate& estimate) {
  std::string parts = fmt::format("parameters {}, gradients {}", bytes_text(estimate.parameters),
                                  bytes_text(estimate.gradients));
  if (estimate.model_state > 0)
    parts += fmt::format(", batch-norm statistics {}", bytes_text(estimate.model_state));
  if (estimate.updater_state > 0)
    parts += fmt::format(", updater state {}", bytes_text(estimate.updater_state));
  if (estimate.sharing > 0)
    parts += fmt::format(", sharing residual {}", bytes_text(estimate.sharing));
  parts += fmt::format(", activations and workspaces at batch {} {}", estimate.batch_size,
                       bytes_text(estimate.batch));
  if (estimate.workers == 1)
    return fmt::format("about {} ({})", bytes_text(estimate.total()), parts);
  return fmt::format("about {} for {} workers (each: {})", bytes_text(estimate.total()),
                     estimate.workers, parts);
}

std::string bytes_text(std::uint64_t bytes) {
  constexpr double kilo = 1e3;
  if (bytes < kilo)
    return fmt::format("{} bytes", bytes);
  const char* units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double value = static_cast<double>(bytes) / kilo;
  std::size_t unit = 0;
  while (value >= kilo && unit + 1 < std::size(units)) {
    value /= kilo;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

} // namespace strom::compute
