#include "strom/compute/data/idx_reader.hpp"
#include <bit>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strom/compute/data/data_content.hpp"
#include "strom/compute/data/huge_pages.hpp"
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
/// The dimension count is one byte (the magic's last).
constexpr std::size_t max_dimension_count = 255;

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
  std::uint64_t elements = 0;    ///< product of the dimensions
  std::uint64_t data_bytes = 0;  ///< elements times element_size
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

/// How the content ended early, for messages: a plain file's end, or a gzip stream's.
std::string content_end(const data_content& content) {
  return fmt::format("{} ends at offset {}", content.gzip() ? "decompressed content" : "file",
                     content.offset());
}

/// Reads exactly out.size() header bytes; `what` says what they are for the message.
result<void> read_header_bytes(data_content& content, std::span<std::uint8_t> out,
                               std::string_view what) {
  auto got = content.read(out);
  if (!got)
    return got.err();
  if (*got < out.size())
    return error{fmt::format("{}: expected {} at offset 0, {}", content.name(), what,
                             content_end(content))};
  return success();
}

/// Checks the content size the header declares before anything of that size is allocated:
/// within max_data_file_bytes; a plain file exactly that long; a gzip file small enough to
/// hold it at deflate's best ratio and a trailer claiming no more (the last member's ISIZE
/// equals the whole content for one member and is less for several). Whatever the trailer
/// says, decompression stops one byte past the declared size (read_elements).
result<void> check_declared_size(const data_content& content, const idx_header& header,
                                 const idx_expectation& expect) {
  const auto& name = content.name();
  const auto layout = fmt::format("{} data after the {}-byte header ({} {})", expect.what,
                                  header.data_offset, dimension_text(header.dimensions),
                                  type_name(header.type));
  const std::uint64_t data_bytes = header.data_bytes;
  // Compared before the header is added, so that the sum cannot wrap.
  if (data_bytes > max_data_file_bytes - header.data_offset)
    return error{fmt::format("{}: expected {} bytes of {}, more than the limit of {} for a "
                             "data file",
                             name, data_bytes, layout, max_data_file_bytes)};
  const std::uint64_t declared = header.data_offset + data_bytes;
  if (!content.gzip()) {
    if (content.file_size() < declared)
      return error{fmt::format("{}: expected {} bytes of {}, file ends at offset {}", name,
                               data_bytes, layout, content.file_size())};
    if (content.file_size() > declared)
      return error{fmt::format("{}: expected {} bytes of {}, found {} extra bytes from offset {}",
                               name, data_bytes, layout, content.file_size() - declared,
                               declared)};
    return success();
  }
  if (declared > content.max_content_size())
    return error{fmt::format("{}: expected {} bytes of {}: {} bytes in all, more than a "
                             "{}-byte gzip file can hold at deflate's best ratio of {}:1",
                             name, data_bytes, layout, declared, content.file_size(),
                             max_deflate_ratio)};
  // A claim beyond deflate's reach is no trailer at all (a truncated file ends in deflate
  // data): decompression, bounded by `declared`, then says where the file ends.
  const std::uint64_t claimed = content.trailer_size();
  if (claimed > declared && claimed <= content.max_content_size())
    return error{fmt::format("{}: gzip trailer claims {} bytes of content (ISIZE at offset {}), "
                             "more than the {} bytes the IDX header declares ({} bytes of {})",
                             name, claimed, content.file_size() - 4, declared, data_bytes,
                             layout)};
  return success();
}

/// Reads the header from the content and checks it, and the content size it declares.
result<idx_header> read_header(data_content& content, const idx_expectation& expect) {
  const auto& path = content.name();
  std::uint8_t magic_field[magic_bytes];
  if (auto ok = read_header_bytes(content, magic_field,
                                  fmt::format("a {}-byte IDX magic", magic_bytes));
      !ok)
    return ok.err();
  const std::uint32_t magic = load_be32(magic_field);
  if (magic_field[0] != 0 || magic_field[1] != 0)
    return error{fmt::format("{}: expected IDX magic 0x{:08x} (two zero bytes, a type code, a "
                             "dimension count) at offset 0, found 0x{:08x}",
                             path, expect.canonical_magic, magic)};
  idx_header header;
  header.type = magic_field[2];
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
  const std::uint8_t dimension_count = magic_field[3];
  if (dimension_count < expect.min_dimensions || dimension_count > expect.max_dimensions) {
    const auto range = expect.min_dimensions == expect.max_dimensions
                         ? fmt::format("{}", expect.min_dimensions)
                         : fmt::format("{} to {}", expect.min_dimensions, expect.max_dimensions);
    return error{fmt::format("{}: expected a dimension count of {} for {} data at offset 3, found {}",
                             path, range, expect.what, dimension_count)};
  }
  header.data_offset = magic_bytes + dimension_count * dimension_bytes;
  std::uint8_t dimension_fields[max_dimension_count * dimension_bytes];
  if (auto ok = read_header_bytes(
        content, {dimension_fields, dimension_count * dimension_bytes},
        fmt::format("a {}-byte IDX header ({} dimensions)", header.data_offset, dimension_count));
      !ok)
    return ok.err();
  header.elements = 1;
  for (std::size_t d = 0; d < dimension_count; ++d) {
    const std::size_t offset = magic_bytes + d * dimension_bytes;
    const std::uint32_t size = load_be32(dimension_fields + d * dimension_bytes);
    // The first dimension (the sample count) may be 0; a sample of no features may not.
    if (size == 0 && d > 0)
      return error{fmt::format("{}: dimension {} at offset {} is 0, expected at least 1", path,
                               d, offset)};
    header.dimensions.push_back(size);
    if (__builtin_mul_overflow(header.elements, std::uint64_t{size}, &header.elements))
      return error{fmt::format("{}: dimensions {} (offset 4 onwards) overflow 64 bits", path,
                               dimension_text(header.dimensions))};
  }
  if (__builtin_mul_overflow(header.elements, std::uint64_t{header.element_size},
                             &header.data_bytes))
    return error{fmt::format("{}: dimensions {} of {} elements (offset 4 onwards) overflow 64 bits",
                             path, dimension_text(header.dimensions), type_name(header.type))};
  if (auto ok = check_declared_size(content, header, expect); !ok)
    return ok.err();
  return header;
}

/// The element bytes after the header: exactly header.data_bytes (inflated into `buffer`,
/// allocated only once the declared size has been checked, or a view of a plain file), and
/// nothing after them.
result<std::span<const std::uint8_t>> read_elements(data_content& content,
                                                    const idx_header& header,
                                                    const idx_expectation& expect,
                                                    std::vector<std::uint8_t>& buffer) {
  auto elements = content.read_view(static_cast<std::size_t>(header.data_bytes), buffer);
  if (!elements)
    return elements.err();
  if (elements->size() < header.data_bytes)
    return error{fmt::format("{}: expected {} bytes of {} data after the {}-byte header ({} {}), "
                             "{}",
                             content.name(), header.data_bytes, expect.what, header.data_offset,
                             dimension_text(header.dimensions), type_name(header.type),
                             content_end(content))};
  // One byte more, into a byte on the stack: a gzip stream must end where the header says.
  std::uint8_t probe = 0;
  auto more = content.read({&probe, 1});
  if (!more)
    return more.err();
  if (*more != 0)
    return error{fmt::format("{}: decompressed content continues past the {} bytes the IDX "
                             "header declares ({} {}): found more at decompressed offset {}",
                             content.name(), header.data_offset + header.data_bytes,
                             dimension_text(header.dimensions), type_name(header.type),
                             header.data_offset + header.data_bytes)};
  return elements;
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

result<idx_images> parse_idx_images(const std::string& name,
                                    std::vector<std::uint8_t> file_bytes) {
  data_content content{name, std::move(file_bytes)};
  auto header = read_header(content, image_file);
  if (!header)
    return header.err();
  std::vector<std::uint8_t> buffer;
  auto elements = read_elements(content, *header, image_file, buffer);
  if (!elements)
    return elements.err();
  idx_images images;
  images.sample_shape = image_shape(header->dimensions);
  images.count = header->dimensions[0];
  resize_on_huge_pages(images.features, static_cast<std::size_t>(header->elements));
  decode_elements(header->type, elements->data(), images.features.size(), images.features.data());
  return images;
}

result<std::vector<std::int32_t>> parse_idx_labels(const std::string& name,
                                                   std::vector<std::uint8_t> file_bytes) {
  data_content content{name, std::move(file_bytes)};
  auto header = read_header(content, label_file);
  if (!header)
    return header.err();
  std::vector<std::uint8_t> buffer;
  auto elements = read_elements(content, *header, label_file, buffer);
  if (!elements)
    return elements.err();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(header->elements));
  decode_elements(header->type, elements->data(), labels.size(), labels.data());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= max_classes)
      return error{fmt::format("{}: label {} at offset {} is outside [0, {})", name, labels[i],
                               header->data_offset + i * header->element_size, max_classes)};
  }
  return labels;
}

result<idx_images> read_idx_images(const std::string& path) {
  auto bytes = read_file_bytes(path);
  if (!bytes)
    return bytes.err();
  return parse_idx_images(path, std::move(*bytes));
}

result<std::vector<std::int32_t>> read_idx_labels(const std::string& path) {
  auto bytes = read_file_bytes(path);
  if (!bytes)
    return bytes.err();
  return parse_idx_labels(path, std::move(*bytes));
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
