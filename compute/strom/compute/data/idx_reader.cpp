#include "strom/compute/data/idx_reader.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/compute/data/file_contents.hpp"

namespace strom::compute {

namespace {

// IDX type codes (http://yann.lecun.com/exdb/mnist/, "THE IDX FILE FORMAT").
constexpr std::uint8_t type_ubyte = 0x08;
constexpr std::uint8_t type_byte = 0x09;
constexpr std::uint8_t type_short = 0x0B;
constexpr std::uint8_t type_int = 0x0C;
constexpr std::uint8_t type_float = 0x0D;
constexpr std::uint8_t type_double = 0x0E;

/// Magic (4 bytes) before the dimensions, each a 4-byte big-endian count.
constexpr std::size_t magic_bytes = 4;
constexpr std::size_t dimension_bytes = 4;

/// What a file is expected to hold, for the checks and the error messages.
struct idx_expectation {
  std::string_view what;         ///< "image" or "label"
  std::uint32_t canonical_magic; ///< the magic MNIST uses for this kind of file
  std::uint8_t min_dimensions;
  std::uint8_t max_dimensions;
  bool integral_only;
};

constexpr idx_expectation image_file{"image", 0x00000803, 2, 4, false};
constexpr idx_expectation label_file{"label", 0x00000801, 1, 1, true};

/// A checked header: the element type, the dimensions and where the elements start.
struct idx_header {
  std::uint8_t type = 0;
  std::size_t element_size = 0;
  std::vector<std::uint32_t> dimensions;
  std::size_t data_offset = 0;
  std::uint64_t elements = 0;  ///< product of the dimensions
};

std::uint32_t load_be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8
         | std::uint32_t{p[3]};
}

std::string_view type_name(std::uint8_t type) {
  switch (type) {
    case type_ubyte: return "ubyte";
    case type_byte: return "byte";
    case type_short: return "short";
    case type_int: return "int";
    case type_float: return "float";
    case type_double: return "double";
    default: return "unknown";
  }
}

/// Bytes per element of a type code, 0 when the code is not an IDX type.
std::size_t element_size(std::uint8_t type) {
  switch (type) {
    case type_ubyte:
    case type_byte: return 1;
    case type_short: return 2;
    case type_int:
    case type_float: return 4;
    case type_double: return 8;
    default: return 0;
  }
}

std::string dimension_text(const std::vector<std::uint32_t>& dimensions) {
  return fmt::format("{}", fmt::join(dimensions, " x "));
}

result<idx_header> parse_header(const std::string& path, const std::vector<std::uint8_t>& bytes,
                                const idx_expectation& expect) {
  if (bytes.size() < magic_bytes)
    return error{fmt::format("{}: expected a {}-byte IDX magic at offset 0, file ends at offset {}",
                             path, magic_bytes, bytes.size())};
  const std::uint32_t magic = load_be32(bytes.data());
  if (bytes[0] != 0 || bytes[1] != 0)
    return error{fmt::format("{}: expected IDX magic 0x{:08x} (two zero bytes, a type code, a "
                             "dimension count) at offset 0, found 0x{:08x}",
                             path, expect.canonical_magic, magic)};
  idx_header header;
  header.type = bytes[2];
  header.element_size = element_size(header.type);
  if (header.element_size == 0)
    return error{fmt::format("{}: unsupported IDX type code 0x{:02x} at offset 2, expected 0x08 "
                             "(ubyte), 0x09 (byte), 0x0b (short), 0x0c (int), 0x0d (float) or "
                             "0x0e (double)",
                             path, header.type)};
  if (expect.integral_only && (header.type == type_float || header.type == type_double))
    return error{fmt::format("{}: {} type code 0x{:02x} ({}) at offset 2 is not integral, "
                             "expected 0x08 (ubyte), 0x09 (byte), 0x0b (short) or 0x0c (int)",
                             path, expect.what, header.type, type_name(header.type))};
  const std::uint8_t dimension_count = bytes[3];
  if (dimension_count < expect.min_dimensions || dimension_count > expect.max_dimensions) {
    const auto range = expect.min_dimensions == expect.max_dimensions
                         ? fmt::format("{}", expect.min_dimensions)
                         : fmt::format("{} to {}", expect.min_dimensions, expect.max_dimensions);
    return error{fmt::format("{}: expected a dimension count of {} for {} data at offset 3, found {}",
                             path, range, expect.what, dimension_count)};
  }
  header.data_offset = magic_bytes + dimension_count * dimension_bytes;
  if (bytes.size() < header.data_offset)
    return error{fmt::format("{}: expected a {}-byte IDX header ({} dimensions), file ends at "
                             "offset {}",
                             path, header.data_offset, dimension_count, bytes.size())};
  header.elements = 1;
  for (std::size_t d = 0; d < dimension_count; ++d) {
    const std::size_t offset = magic_bytes + d * dimension_bytes;
    const std::uint32_t size = load_be32(bytes.data() + offset);
    // The first dimension (the sample count) may be 0; a sample of no features may not.
    if (size == 0 && d > 0)
      return error{fmt::format("{}: dimension {} at offset {} is 0, expected at least 1", path,
                               d, offset)};
    header.dimensions.push_back(size);
    if (__builtin_mul_overflow(header.elements, std::uint64_t{size}, &header.elements))
      return error{fmt::format("{}: dimensions {} (offset 4 onwards) overflow 64 bits", path,
                               dimension_text(header.dimensions))};
  }
  std::uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(header.elements, std::uint64_t{header.element_size}, &data_bytes))
    return error{fmt::format("{}: dimensions {} of {} elements (offset 4 onwards) overflow 64 bits",
                             path, dimension_text(header.dimensions), type_name(header.type))};
  // Only now, with the size checked against the real length, may anything be allocated.
  const std::uint64_t available = bytes.size() - header.data_offset;
  if (available < data_bytes)
    return error{fmt::format("{}: expected {} bytes of {} data after the {}-byte header ({} {}), "
                             "file ends at offset {}",
                             path, data_bytes, expect.what, header.data_offset,
                             dimension_text(header.dimensions), type_name(header.type),
                             bytes.size())};
  if (available > data_bytes)
    return error{fmt::format("{}: expected {} bytes of {} data after the {}-byte header ({} {}), "
                             "found {} extra bytes from offset {}",
                             path, data_bytes, expect.what, header.data_offset,
                             dimension_text(header.dimensions), type_name(header.type),
                             available - data_bytes, header.data_offset + data_bytes)};
  return header;
}

// Big-endian element loads; std::bit_cast carries the bits of float and double.
template <class T>
T load_be(const std::uint8_t* p) {
  if constexpr (sizeof(T) == 1) {
    return std::bit_cast<T>(*p);
  } else if constexpr (sizeof(T) == 2) {
    std::uint16_t bits;
    std::memcpy(&bits, p, 2);
    return std::bit_cast<T>(__builtin_bswap16(bits));
  } else if constexpr (sizeof(T) == 4) {
    std::uint32_t bits;
    std::memcpy(&bits, p, 4);
    return std::bit_cast<T>(__builtin_bswap32(bits));
  } else {
    std::uint64_t bits;
    std::memcpy(&bits, p, 8);
    return std::bit_cast<T>(__builtin_bswap64(bits));
  }
}

template <class In, class Out>
void convert(const std::uint8_t* src, std::size_t count, Out* dst) {
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = static_cast<Out>(load_be<In>(src + i * sizeof(In)));
}

/// Converts `count` elements of `type` at `src` to Out, one switch per file, not per element.
template <class Out>
void decode_elements(std::uint8_t type, const std::uint8_t* src, std::size_t count, Out* dst) {
  switch (type) {
    case type_ubyte: convert<std::uint8_t>(src, count, dst); break;
    case type_byte: convert<std::int8_t>(src, count, dst); break;
    case type_short: convert<std::int16_t>(src, count, dst); break;
    case type_int: convert<std::int32_t>(src, count, dst); break;
    case type_float: convert<float>(src, count, dst); break;
    case type_double: convert<double>(src, count, dst); break;
  }
}

shape image_shape(const std::vector<std::uint32_t>& dimensions) {
  switch (dimensions.size()) {
    case 2: return {1, 1, dimensions[1]};
    case 3: return {1, dimensions[1], dimensions[2]};
    default: return {dimensions[1], dimensions[2], dimensions[3]};
  }
}

} // namespace

result<idx_images> read_idx_images(const std::string& path) {
  auto bytes = read_file_contents(path);
  if (!bytes)
    return bytes.err();
  auto header = parse_header(path, *bytes, image_file);
  if (!header)
    return header.err();
  idx_images images;
  images.sample_shape = image_shape(header->dimensions);
  images.count = header->dimensions[0];
  images.features.resize(static_cast<std::size_t>(header->elements));
  decode_elements(header->type, bytes->data() + header->data_offset, images.features.size(),
                  images.features.data());
  return images;
}

result<std::vector<std::int32_t>> read_idx_labels(const std::string& path) {
  auto bytes = read_file_contents(path);
  if (!bytes)
    return bytes.err();
  auto header = parse_header(path, *bytes, label_file);
  if (!header)
    return header.err();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(header->elements));
  decode_elements(header->type, bytes->data() + header->data_offset, labels.size(),
                  labels.data());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= max_classes)
      return error{fmt::format("{}: label {} at offset {} is outside [0, {})", path, labels[i],
                               header->data_offset + i * header->element_size, max_classes)};
  }
  return labels;
}

result<dataset> make_idx_dataset(idx_images images, std::vector<std::int32_t> labels,
                                 const std::string& images_path,
                                 const std::string& labels_path) {
  if (images.count != labels.size())
    return error{fmt::format("{} holds {} images but {} holds {} labels", images_path,
                             images.count, labels_path, labels.size())};
  dataset data;
  data.sample_shape = images.sample_shape;
  data.classes = class_count(labels);
  data.features = std::move(images.features);
  data.labels = std::move(labels);
  return data;
}

result<dataset> read_idx(const std::string& images_path, const std::string& labels_path) {
  auto images = read_idx_images(images_path);
  if (!images)
    return images.err();
  auto labels = read_idx_labels(labels_path);
  if (!labels)
    return labels.err();
  return make_idx_dataset(std::move(*images), std::move(*labels), images_path, labels_path);
}

} // namespace strom::compute
