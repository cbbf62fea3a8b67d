#pragma once
// Builds the updater and the learning rate schedule that a job's training.updater asks for,
// refusing any value outside its range with the field's path and the value in the message.

#include <memory>

#include "strom/compute/result.hpp"
#include "strom/compute/updaters/learning_rate_schedule.hpp"
#include "strom/compute/updaters/updater.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// The updater chosen by the spec's union (sgd, momentum, nesterov, adam, rmsProp, adaGrad),
/// with its options validated. Reads only the union; see make_schedule for the rate.
result<std::unique_ptr<updater>> make_updater(schema::Updater::Reader spec);

/// The schedule built from learningRate and schedule, both validated.
result<learning_rate_schedule> make_schedule(schema::Updater::Reader spec);

} // namespace strom::compute
