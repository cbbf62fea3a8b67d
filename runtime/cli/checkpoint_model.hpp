#pragma once
// A checkpoint as a model to use: what `strom eval` and `strom predict` load first.

#include <memory>
#include <optional>
#include <string>

#include "options/arguments.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/result.hpp"
#include "strom/runtime/job/checkpoint.hpp"
#include "strom/runtime/job/input_samples.hpp"

namespace strom::cli {

/// A checkpoint and its job's network holding the checkpoint's buffers.
struct checkpoint_model {
  runtime::checkpoint_contents saved;
  std::unique_ptr<compute::replica> replica;
};

/// Loads the checkpoint at `path` into a network built from its job; errors name the path.
result<checkpoint_model> load_checkpoint_model(const std::string& path);

/// --data FILE and --labels FILE: their option lines.
std::vector<option_spec> input_data_options();

/// The samples --data (and --labels) name, for `model`'s network, with its job's
/// preprocessing; errors name the file and what does not fit the model.
result<runtime::input_samples> load_input_data(const checkpoint_model& model,
                                               const arguments& args);

} // namespace strom::cli
