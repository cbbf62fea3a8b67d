#pragma once
// A job's preprocessing as new samples need it (strom predict, strom eval --data, a host
// program's trained_model): the job's scale and, when it standardises, the statistics fitted
// on its training set, which is read again for them (checkpoints do not carry them yet), so
// that a trained model sees new data as it saw its training data.

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/data/preprocessing.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// What a job does to its data before the network sees it.
class job_preprocessing {
public:
  /// The preprocessing of `job`; errors name the job and why its training set, needed for
  /// standardisation statistics, could not be read.
  static result<job_preprocessing> of(const job_spec& job);

  /// Preprocesses `data` in place, as the job's training and test data were.
  void apply(compute::dataset& data) const;

  // -- properties --------------------------------------------------------------------------

  /// The factor every feature is multiplied by first (1 when the job does not scale).
  float scale() const noexcept { return scale_; }
  /// The standardisation statistics fitted on the training set: empty when the job does not
  /// standardise, one mean and deviation (global) or one of each per feature.
  const compute::standardization& statistics() const noexcept { return statistics_; }

private:
  float scale_ = 1.0f;
  compute::standardization statistics_;  ///< empty when the job does not standardise
};

} // namespace strom::runtime
