#pragma once

#include <cstdint>
#include <memory>

#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// A replica for `job`: model, updater, schedule and L2 from the spec, parameters initialised
/// from the job's seed (equal on every worker), dropout masks seeded per `worker`.
result<std::unique_ptr<replica>> make_replica(schema::Job::Reader job, std::uint32_t worker);

} // namespace strom::compute
