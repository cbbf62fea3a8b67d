#include "strom/compute/data/csv_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "strom/compute/data/file_contents.hpp"

namespace strom::compute {

namespace {

/// Offending text longer than this is cut in error messages, so a binary file given by
/// mistake does not produce a megabyte-long message.
constexpr std::size_t max_quoted_text = 64;

/// Columns a line may hold: a 512x512 RGB image as one row of features is 786432; more
/// is a file that is not a table of samples (a binary file, one endless line).
constexpr std::size_t max_csv_columns = std::size_t{1} << 20;

std::string quote(std::string_view text) {
  if (text.size() <= max_quoted_text)
    return fmt::format("'{}'", text);
  return fmt::format("'{}...'", text.substr(0, max_quoted_text));
}

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back()))
    text.remove_suffix(1);
  return text;
}

/// from_chars rejects a leading '+', which spreadsheets write.
std::string_view drop_plus(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+')
    text.remove_prefix(1);
  return text;
}

template <class T>
bool parse_whole(std::string_view text, T& value) {
  text = drop_plus(text);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size();
}

/// Parses the text in [data, data + size) into `out`; `path` names the file in errors.
class csv_parser {
public:
  csv_parser(const std::string& path, const csv_options& options, dataset& out)
    : path_(path), options_(options), out_(out) {}

  result<void> parse_line(std::string_view line, std::size_t line_number) {
    std::size_t column = 0;
    std::size_t start = 0;
    for (;;) {
      if (column == max_csv_columns)
        return error{fmt::format("{}: line {} has more than {} columns", path_, line_number,
                                 max_csv_columns)};
      const std::size_t stop = line.find(options_.delimiter, start);
      const std::string_view field = trim(line.substr(start, stop - start));
      if (auto ok = parse_field(field, line_number, column); !ok)
        return ok;
      ++column;
      if (stop == std::string_view::npos)
        break;
      start = stop + 1;
    }
    return check_columns(column, line_number);
  }

  std::size_t columns() const noexcept { return columns_; }

private:
  result<void> parse_field(std::string_view field, std::size_t line_number, std::size_t column) {
    if (options_.labelled && column == options_.label_column) {
      std::int64_t label = 0;
      if (!parse_whole(field, label))
        return error{fmt::format("{}: line {}, column {}: expected an integer label, found {}",
                                 path_, line_number, column + 1, quote(field))};
      if (label < 0 || static_cast<std::uint64_t>(label) >= max_classes)
        return error{fmt::format("{}: line {}, column {}: label {} is outside [0, {})", path_,
                                 line_number, column + 1, label, max_classes)};
      out_.labels.push_back(static_cast<std::int32_t>(label));
      return success();
    }
    float value = 0;
    if (!parse_whole(field, value) || !std::isfinite(value))
      return error{fmt::format("{}: line {}, column {}: expected a finite number, found {}",
                               path_, line_number, column + 1, quote(field))};
    out_.features.push_back(value);
    return success();
  }

  result<void> check_columns(std::size_t found, std::size_t line_number) {
    if (columns_ == 0) {
      if (options_.labelled && options_.label_column >= found)
        return error{fmt::format("{}: line {} has {} columns, too few for label column {} "
                                 "(0-based)",
                                 path_, line_number, found, options_.label_column)};
      if (options_.labelled && found < 2)
        return error{fmt::format("{}: line {} has only the label column, expected at least one "
                                 "feature column",
                                 path_, line_number)};
      columns_ = found;
      first_line_ = line_number;
      return success();
    }
    if (found != columns_)
      return error{fmt::format("{}: line {} has {} columns, expected {} like line {}", path_,
                               line_number, found, columns_, first_line_)};
    return success();
  }

  const std::string& path_;
  const csv_options& options_;
  dataset& out_;
  std::size_t columns_ = 0;     // columns of the first data line, 0 before it
  std::size_t first_line_ = 0;  // its line number, for the ragged-row message
};

} // namespace

result<dataset> parse_csv(const std::string& path, std::vector<std::uint8_t> file_bytes,
                          const csv_options& options) {
  auto bytes = decompressed_contents(path, std::move(file_bytes), max_csv_bytes);
  if (!bytes)
    return bytes.err();
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());

  dataset data;
  csv_parser parser(path, options, data);
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t stop = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, stop - start);
    start = stop + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if ((options.header && line_number == 1) || trim(line).empty())
      continue;
    if (auto ok = parser.parse_line(line, line_number); !ok)
      return ok.err();
  }
  if (parser.columns() == 0)
    return error{fmt::format("{}: no data lines", path)};
  data.sample_shape = {1, 1, parser.columns() - (options.labelled ? 1 : 0)};
  data.classes = class_count(data.labels);
  return data;
}

result<dataset> read_csv(const std::string& path, const csv_options& options) {
  auto bytes = read_file_bytes(path, max_csv_bytes);
  if (!bytes)
    return bytes.err();
  return parse_csv(path, std::move(*bytes), options);
}

} // namespace strom::compute
