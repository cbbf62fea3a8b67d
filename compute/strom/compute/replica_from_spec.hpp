#pragma once

#include <cstdint>
#include <memory>

#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// Checks the training settings every worker uses: epochs, batch size, compute threads
/// (each within its bound) and L2 (finite, >= 0); errors name the field and the value.
result<void> check_training(schema::Training::Reader training);

/// The job's updater, learning-rate schedule and L2 (training.updater, training.l2).
result<replica_options> make_replica_options(schema::Job::Reader job);

/// The seed of the dropout masks of worker `worker` (or pipeline copy) of a job seeded `seed`:
/// a stream apart from the initial weights', different for every worker.
std::uint64_t dropout_seed(std::uint64_t seed, std::uint32_t worker);

/// A replica for `job`: model, updater, schedule and L2 from the spec, parameters initialised
/// from the job's seed (equal on every worker), dropout masks seeded per `worker`, its step
/// on training.device (an error says why where that is cuda and CUDA cannot run here).
result<std::unique_ptr<replica>> make_replica(schema::Job::Reader job, std::uint32_t worker);

} // namespace strom::compute
