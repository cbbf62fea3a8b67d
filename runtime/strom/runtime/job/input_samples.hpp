#pragma once
// Samples a user brings to a trained model (strom predict, strom eval --data): an IDX image
// file, plain or gzip, with an optional IDX label file, or a CSV file whose rows hold the
// model's features with or without a label column, read as the files hold them (the
// model applies the job's preprocessing: trained_model.hpp).

#include <optional>
#include <string>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::runtime {

/// Samples to predict on or evaluate.
struct input_samples {
  compute::dataset data;  ///< as the files hold it; labels all 0 when `labelled` is false
  bool labelled = false;  ///< the input carried labels
};

/// Reads `data_path` (and `labels_path`, an IDX label file, for IDX images) for the network
/// of `job`, whose input takes `features` floats a sample. A CSV row of `features` columns
/// has no label; one of `features` + 1 has its label in the job's CSV label column (column 0
/// when the job's training data is not CSV). Errors name the file and what does not fit.
result<input_samples> load_input_samples(const job_spec& job, std::size_t features,
                                         const std::string& data_path,
                                         const std::optional<std::string>& labels_path);

} // namespace strom::runtime
