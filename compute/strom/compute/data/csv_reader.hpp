#pragma once
// Reader for delimited text: one sample per line, numeric features and one integer label
// column. Files may be gzip-compressed. Size (max_csv_bytes) and columns per line are
// bounded, so a hostile file is refused before it can exhaust memory.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/result.hpp"

namespace strom::compute {

/// The most bytes a CSV file may hold, as stored and decompressed: Fashion-MNIST's training
/// set as CSV is 133 MB; its features as floats take up to twice the text's size again
/// ("0," is one float). Checked before reading and while decompressing.
inline constexpr std::uint64_t max_csv_bytes = std::uint64_t{1} << 29;

/// How a CSV file is laid out.
struct csv_options {
  std::size_t label_column = 0;  ///< 0-based column holding the integer class label
  bool header = false;           ///< skip the first line
  char delimiter = ',';          ///< field separator
  /// false: no column is a label, every one a feature (data to predict on); `labels` then
  /// stays empty, so count the samples by their features.
  bool labelled = true;
};

/// Reads `path`: every non-blank line has the same number of columns; the label column holds
/// an integer in [0, max_classes), the others finite numbers. Blank lines are skipped, a
/// trailing '\r' is dropped, spaces and tabs around fields are ignored. sample_shape is
/// {1, 1, features}. Errors name the file, the line, the column (1-based) and the text.
result<dataset> read_csv(const std::string& path, const csv_options& options);

/// read_csv on a file's bytes already read from `path` (as stored, gzip or not).
result<dataset> parse_csv(const std::string& path, std::vector<std::uint8_t> file_bytes,
                          const csv_options& options);

} // namespace strom::compute
