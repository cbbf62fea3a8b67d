#pragma once
// --data FILE and --labels FILE, the samples of one's own that `strom eval` and `strom
// predict` give a trained model.

#include <optional>
#include <string>
#include <vector>

#include "options/arguments.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/input_samples.hpp"
#include "strom/runtime/trained_model.hpp"

namespace strom::cli {

/// The two options' lines.
std::vector<option_spec> input_data_options();

/// The samples of `data_path` (--data) and `labels_path` (--labels), as their files hold
/// them, for `model`'s network; errors name the file and what does not fit the model (sample
/// size, labels beyond its classes).
result<runtime::input_samples> load_input_data(const runtime::trained_model& model,
                                               const std::string& data_path,
                                               const std::optional<std::string>& labels_path);

} // namespace strom::cli
