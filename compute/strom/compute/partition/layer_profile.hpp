#pragma once
// Measures a job's layer costs (layer_costs.hpp) by running each layer's forward and backward
// on a few real batches. compute/ reads no clock: the caller passes one, so tests and
// simulations can run the profiler on a clock of their own.

#include <cstddef>
#include <cstdint>
#include <functional>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/partition/layer_costs.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// Batches timed after the untimed warm-up one: enough to average out a scheduling blip on
/// a shared machine while keeping a profile of the fashion MLP well under a second.
inline constexpr std::uint32_t default_profiled_batches = 3;

/// How to profile.
struct layer_profile_options {
  std::uint32_t batches = default_profiled_batches;  ///< timed batches (after one warm-up)
  std::function<double()> seconds_now;               ///< a monotonic clock, in seconds
  /// Samples a batch; 0: the job's batch size. A pipeline stage computes micro-batches, and
  /// a small batch costs more a sample (smaller matrix products): profile at its size.
  std::size_t batch_size = 0;
};

/// The costs of `job`'s layers at its batch size (or options.batch_size), measured on the
/// first samples of `samples` (taken as they are, cycling when there are fewer than the
/// batches need); memory sizes come from the layers and the job's updater
/// (updater::state_size). Fails when the job's network
/// or updater is invalid, when `samples` does not have the network's input shape or holds
/// fewer samples than one batch, or without a clock.
result<layer_costs> profile_layers(schema::Job::Reader job, const dataset& samples,
                                   const layer_profile_options& options);

} // namespace strom::compute
