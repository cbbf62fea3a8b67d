#pragma once
// Builds the threshold encoder options that a job's distributed.sharing asks for, refusing any
// value outside its range with the field's path and the value in the message.

#include "strom/compute/codecs/threshold_encoder.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// The encoder options of `spec` (distributed.sharing): the threshold policy chosen by its
/// union, residual clipping and shake-up, all validated.
result<threshold_encoder_options> make_threshold_encoder_options(schema::Sharing::Reader spec);

/// How the workers' updates combine in each replica, as `spec.combine` says for a job whose
/// updater is `updater` (job.capnp, UpdateCombination): each update is multiplied by
/// W^-power, W the workers: 0 sums them, 1 averages them.
float update_power(schema::Sharing::Reader spec, schema::Updater::Reader updater);

} // namespace strom::compute
