#pragma once
// Builds the threshold encoder options that a job's distributed.sharing asks for, refusing any
// value outside its range with the field's path and the value in the message.

#include "strom/compute/encoders/threshold_encoder.hpp"
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

/// What a worker does with its own update.
struct own_update_handling {
  bool at_once = true;           ///< applied to its replica as it is computed (trainer.hpp)
  bool momentum_masking = true;  ///< the momentum of the elements it sent is cleared
};

/// How a worker of a job whose updates combine with `power` (update_power) handles its own
/// update: where they are averaged, like every other update (applied as its frame arrives,
/// momentum kept), so that every replica takes the same step, synchronous data parallelism's;
/// where they are summed, as `spec.applyOwnUpdate` and `spec.momentumMasking` say.
own_update_handling own_update_handling_of(schema::Sharing::Reader spec, float power);

} // namespace strom::compute
