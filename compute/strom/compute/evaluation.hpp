#pragma once

#include <cstddef>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/model.hpp"

namespace strom::compute {

/// A model's quality on a labelled dataset.
struct evaluation {
  double loss = 0.0;      ///< mean softmax cross-entropy
  double accuracy = 0.0;  ///< fraction classified correctly
  std::size_t samples = 0;
};

/// Runs inference over all of `data` in batches of at most net.max_batch() samples.
evaluation evaluate(model& net, const dataset& data);

} // namespace strom::compute
