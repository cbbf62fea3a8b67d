#include "strom/compute/replica_from_spec.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

namespace strom::compute {

namespace {

/// Stream numbers for derive_seed: separate sequences for initial weights and dropout.
constexpr std::uint64_t dropout_stream = 1'000'000;

/// The same bound as `strom train --epochs` (runtime/cli/commands.hpp): more is a typo.
constexpr std::uint32_t max_epochs = 1'000'000;

/// Samples per worker and batch. The largest published data-parallel batches (Goyal et al.
/// 2017: 8k; You et al. 2018, LARS: 32k-64k) are totals over hundreds of workers; 2^20 per
/// worker is far beyond them, so larger is a typo (10^9 once ended in std::bad_alloc).
constexpr std::uint32_t max_batch_size = 1u << 20;

/// BLAS threads per worker. OpenBLAS silently caps at its build's MAX_THREADS (64 in
/// Debian's 0.3.21, up to 1024 in builds for large machines); a job travels to every node,
/// so the bound is a constant rather than this machine's thread count.
constexpr std::uint32_t max_compute_threads = 1024;

result<void> require_in(std::string_view path, std::uint64_t value, std::uint64_t low,
                        std::uint64_t high) {
  if (value < low || value > high)
    return error{fmt::format("{}: {} is outside [{}, {}]", path, value, low, high)};
  return success();
}

} // namespace

result<void> check_training(schema::Training::Reader training) {
  if (auto ok = require_in("training.epochs", training.getEpochs(), 1, max_epochs); !ok)
    return ok;
  if (auto ok = require_in("training.batchSize", training.getBatchSize(), 1, max_batch_size); !ok)
    return ok;
  if (auto ok = require_in("training.computeThreads", training.getComputeThreads(), 1,
                           max_compute_threads);
      !ok)
    return ok;
  const float l2 = training.getL2();
  if (!std::isfinite(l2) || l2 < 0.0f)
    return error{fmt::format("training.l2: {} must be finite and >= 0", l2)};
  return success();
}

result<replica_options> make_replica_options(schema::Job::Reader job) {
  auto rule = make_updater(job.getTraining().getUpdater());
  if (!rule)
    return rule.err();
  auto schedule = make_schedule(job.getTraining().getUpdater());
  if (!schedule)
    return schedule.err();
  return replica_options{std::move(rule).value(), std::move(schedule).value(),
                         job.getTraining().getL2()};
}

std::uint64_t dropout_seed(std::uint64_t seed, std::uint32_t worker) {
  return derive_seed(seed, dropout_stream + worker);
}

result<std::unique_ptr<replica>> make_replica(schema::Job::Reader job, std::uint32_t worker) {
  auto training = job.getTraining();
  if (auto ok = check_training(training); !ok)
    return ok.err();
  const std::uint64_t seed = training.getSeed();
  auto net = make_model(job.getNetwork(), dropout_seed(seed, worker));
  if (!net)
    return net.err();
  auto options = make_replica_options(job);
  if (!options)
    return options.err();
  (*net)->initialize(seed);
  (*net)->reserve(training.getBatchSize());
  if (training.getDevice() == schema::Device::CUDA) {
    options->device = device_kind::cuda;
    options->device_seed = dropout_seed(seed, worker);
  }
  try {
    return std::make_unique<replica>(std::move(net).value(), std::move(options).value());
  } catch (const std::exception& e) {  // CUDA cannot run here, or lacks a layer or updater
    return error{fmt::format("training.device = cuda: {}", e.what())};
  }
}

} // namespace strom::compute
