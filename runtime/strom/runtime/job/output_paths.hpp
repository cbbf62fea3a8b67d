#pragma once
// Checks, before a run starts, that what it will write at its end can be written: a
// checkpoint folder or a metrics file that cannot be written would otherwise be found only
// after the first epoch (or the whole run) had been paid for.

#include <optional>
#include <string>

#include "strom/compute/result.hpp"

namespace strom::runtime {

/// Creates `dir` (with its parents) when missing and proves it takes new files by creating
/// and removing a probe file in it. Errors name the path, `option` and the OS error.
result<void> check_writable_dir(const std::string& dir, const std::string& option);

/// Checks that `path` can be written later: not a folder, and its parent folder exists and
/// takes new files (a probe file is created and removed there; `path` itself is not touched).
result<void> check_writable_file(const std::string& path, const std::string& option);

/// The checks for a training command's outputs: --checkpoint-dir (unless empty) and
/// --metrics-out (when given).
result<void> check_training_outputs(const std::string& checkpoint_dir,
                                    const std::optional<std::string>& metrics_out);

} // namespace strom::runtime
