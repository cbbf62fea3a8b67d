#pragma once
// Feature preprocessing: scaling, and standardisation whose statistics come from the training
// set only and are then applied unchanged to training and test data (fitting on test data
// would leak it into training).

#include <vector>

#include "strom/compute/data/dataset.hpp"

namespace strom::compute {

/// Multiplies every feature by `factor` (1/255 turns pixels into [0, 1]).
void scale(dataset& data, float factor);

/// Which statistics standardisation uses.
enum class standardize_kind {
  none,        ///< leave features unchanged
  global,      ///< one mean and standard deviation over all features
  per_feature  ///< one mean and standard deviation per feature position
};

/// Statistics to standardise with: x -> (x - mean) / stddev.
struct standardization {
  std::vector<float> mean;    ///< empty (none), one value (global) or one per feature
  std::vector<float> stddev;  ///< as mean; population standard deviation
};

/// The statistics of `data` for `kind`; an empty dataset gives mean 0 and stddev 1.
standardization fit_standardization(const dataset& data, standardize_kind kind);

/// Standardises `data` in place; a stddev of 0 (a constant feature) is treated as 1. Throws
/// std::invalid_argument when the statistics have neither 0, 1 nor sample_shape.size() values.
void apply(dataset& data, const standardization& stats);

} // namespace strom::compute
