#pragma once
// Builds a model from the job's network description, checking every setting; errors name
// the field path ("network.layers[2].convolution.kernel: ...").

#include <cstdint>
#include <memory>
#include <vector>

#include "strom/compute/model.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// A network's layers, built and checked, before any model buffer exists.
struct network_layers {
  shape input;                                ///< one sample's shape
  std::vector<std::unique_ptr<layer>> layers;  ///< first to last
  std::size_t classes = 0;                     ///< the output layer's units
};

/// The layers `spec` describes, every setting checked (sizes against their limits, without
/// overflow). Allocates nothing in proportion to the layers: a job can be checked and its
/// memory estimated this way before the model exists.
result<network_layers> make_layers(schema::Network::Reader spec, std::uint64_t dropout_seed);

/// A model for `spec`, not yet initialised. `dropout_seed` seeds the dropout masks (distinct
/// per worker); initial parameter values come from model::initialize.
result<std::unique_ptr<model>> make_model(schema::Network::Reader spec, std::uint64_t dropout_seed);

} // namespace strom::compute
