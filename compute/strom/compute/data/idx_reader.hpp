#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// a big-endian magic (two zero bytes, a type code, a dimension count), one big-endian uint32
// per dimension, then the elements, big-endian, row-major. Files may be gzip-compressed:
// the header is decompressed first and the rest only up to the size it declares.

#include <cstdint>
#include <string>
#include <vector>

#include "strom/compute/data/dataset.hpp"
#include "strom/compute/result.hpp"
#include "strom/compute/shape.hpp"

namespace strom::compute {

/// The samples of an IDX image file, converted to floats.
struct idx_images {
  shape sample_shape;           ///< {1, rows, cols} for 3 dimensions, {d1, d2, d3} for 4, {1, 1, d1} for 2
  std::size_t count = 0;        ///< the first dimension
  std::vector<float> features;  ///< count * sample_shape.size() floats
};

/// Reads an image file of 2 to 4 dimensions and any IDX type code (0x08 ubyte, 0x09 byte,
/// 0x0B short, 0x0C int, 0x0D float, 0x0E double). The content the header declares must
/// hold at most max_data_file_bytes; errors name the file, the offset and the expected size.
result<idx_images> read_idx_images(const std::string& path);

/// read_idx_images on a file's bytes already read from `name` (as stored, gzip or not).
result<idx_images> parse_idx_images(const std::string& name, std::vector<std::uint8_t> file_bytes);

/// read_idx_labels on a file's bytes already read from `name` (as stored, gzip or not).
result<std::vector<std::int32_t>> parse_idx_labels(const std::string& name,
                                                   std::vector<std::uint8_t> file_bytes);

/// Reads a label file of 1 dimension and an integral type code; labels must lie in
/// [0, max_classes).
result<std::vector<std::int32_t>> read_idx_labels(const std::string& path);

/// Joins images and labels read from the two paths (named in the error) into a dataset;
/// fails when their counts differ. classes = max label + 1, at least 1.
result<dataset> make_idx_dataset(idx_images images, std::vector<std::int32_t> labels,
                                 const std::string& images_path, const std::string& labels_path);

/// read_idx_images, read_idx_labels and make_idx_dataset in one call.
result<dataset> read_idx(const std::string& images_path, const std::string& labels_path);

} // namespace strom::compute
