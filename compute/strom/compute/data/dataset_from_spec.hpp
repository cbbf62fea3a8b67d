#pragma once
// Loads a job's training and test data as its DataSpec describes (schema/job.capnp).

#include <string>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/data/preprocessing.hpp"
#include "strom/compute/result.hpp"
#include "strom/schema/job.capnp.h"

namespace strom::compute {

/// The datasets of a job, preprocessed.
struct training_data {
  dataset train;  ///< never empty
  dataset test;   ///< empty (with train's sample shape) when the spec has no test source
  standardization statistics;  ///< fitted on train, applied to both (and to new data)
};

/// Reads spec.train and spec.test, resolving relative paths against `base_dir` (the job file's
/// folder), then scales both and standardises both with statistics fitted on train. Both get
/// the larger class count of the two. Errors start with the field ("data.train.idx.images: ").
result<training_data> load_data(schema::DataSpec::Reader spec, const std::string& base_dir);

} // namespace strom::compute
