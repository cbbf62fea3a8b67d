// Fuzz target: the CSV reader on a file's bytes as stored (plain or gzip). The first byte
// picks the layout (bit 0: header line, bits 1-2: label column, bit 3: ';' as delimiter);
// the rest is the file. Aborts when an accepted table is ragged or holds a non-finite value.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "strom/compute/data/csv_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strom::compute;
  if (size == 0)
    return 0;
  csv_options options;
  options.header = (data[0] & 1) != 0;
  options.label_column = (data[0] >> 1) & 3;
  options.delimiter = (data[0] & 8) != 0 ? ';' : ',';
  auto table = parse_csv("fuzz.csv", std::vector<std::uint8_t>(data + 1, data + size), options);
  if (!table.ok())
    return 0;
  if (table->features.size() != table->labels.size() * table->sample_shape.size())
    std::abort();  // accepted rows of different lengths
  for (const float value : table->features)
    if (!std::isfinite(value))
      std::abort();  // accepted a non-finite feature
  return 0;
}
