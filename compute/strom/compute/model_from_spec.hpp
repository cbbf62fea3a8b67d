#pragma once
// Builds a model from the job's network description, checking every setting; errors name
// the field path ("network.layers[2].convolution.kernel: ...").

#include <cstdint>
#include <memory>

#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// A model for `spec`, not yet initialised. `dropout_seed` seeds the dropout masks (distinct
/// per worker); initial parameter values come from model::initialize.
result<std::unique_ptr<model>> make_model(schema::Network::Reader spec, std::uint64_t dropout_seed);

} // namespace strom::compute
