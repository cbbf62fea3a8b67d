#pragma once
// Reader for delimited text: one sample per line, numeric features and one integer label
// column. Files may be gzip-compressed.

#include <cstddef>
#include <string>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// How a CSV file is laid out.
struct csv_options {
  std::size_t label_column = 0;  ///< 0-based column holding the integer class label
  bool header = false;           ///< skip the first line
  char delimiter = ',';          ///< field separator
};

/// Reads `path`: every non-blank line has the same number of columns; the label column holds
/// an integer in [0, max_classes), the others finite numbers. Blank lines are skipped, a
/// trailing '\r' is dropped, spaces and tabs around fields are ignored. sample_shape is
/// {1, 1, features}. Errors name the file, the line, the column (1-based) and the text.
result<dataset> read_csv(const std::string& path, const csv_options& options);

} // namespace strom::compute
