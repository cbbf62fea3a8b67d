#include "strom/runtime/job/capnp_text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capnp/schema.h>
#include <capnp/serialize-text.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace strom::runtime {

namespace {

/// The text of 1-based line `line`.
std::string_view line_text(std::string_view text, std::size_t line) {
  std::size_t start = 0;
  for (std::size_t l = 1; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos)
      ++start;
  }
  if (start == std::string_view::npos || start > text.size())
    return {};
  auto end = text.find('\n', start);
  return text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

/// Quoted lines are cut to this many characters around the column: a one-line file of
/// 10 KB (a nesting bomb) would otherwise be printed whole.
constexpr std::size_t max_quoted_columns = 100;

error error_at(std::string_view text, const std::string& source, std::size_t line,
               std::size_t column, std::string_view problem) {
  auto quoted = line_text(text, line);
  std::size_t caret = column;
  if (quoted.size() > max_quoted_columns) {
    const std::size_t first = column > max_quoted_columns / 2 ? column - max_quoted_columns / 2 : 0;
    quoted = quoted.substr(std::min(first, quoted.size()), max_quoted_columns);
    caret = column - first;
  }
  return error{fmt::format("{}:{}:{}: {}\n    {}\n    {:>{}}", source, line, column, problem,
                           quoted, "^", caret)};
}

/// 1-based line and column of a byte offset.
std::pair<std::size_t, std::size_t> position_of(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

/// For every field of an enum type anywhere in a schema: its valid enumerant names.
using enum_fields = std::map<std::string, std::set<std::string>>;

void collect_enum_fields(capnp::StructSchema schema, enum_fields& out,
                         std::set<std::uint64_t>& visited) {
  if (!visited.insert(schema.getProto().getId()).second)
    return;
  for (auto field : schema.getFields()) {
    auto type = field.getType();
    if (type.isList())
      type = type.asList().getElementType();
    if (type.isEnum()) {
      auto& names = out[field.getProto().getName()];
      for (auto enumerant : type.asEnum().getEnumerants())
        names.insert(enumerant.getProto().getName());
    } else if (type.isStruct()) {
      collect_enum_fields(type.asStruct(), out, visited);
    }
  }
}

enum_fields enum_fields_of(capnp::StructSchema schema) {
  enum_fields out;
  std::set<std::uint64_t> visited;
  collect_enum_fields(schema, out, visited);
  return out;
}

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Where the text nests ( [ { deeper than kind.max_nesting, skipping # comments and
/// string literals as Cap'n Proto's lexer does. A literal ends at a newline too: the lexer
/// refuses a newline inside one, so counting on from there errs towards refusing.
std::optional<error> find_too_deep(std::string_view text, const std::string& source,
                                   const text_file_kind& kind) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '"') {
      while (i + 1 < text.size() && text[i + 1] != '"' && text[i + 1] != '\n')
        i += text[i + 1] == '\\' && i + 2 < text.size() && text[i + 2] != '\n' ? 2 : 1;
      if (i + 1 < text.size() && text[i + 1] == '"')
        ++i;  // the closing quote
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kind.max_nesting) {
        auto [line, column] = position_of(text, i);
        return error_at(text, source, line, column,
                        fmt::format("nested more than {} levels deep (a {} needs fewer than {})",
                                    kind.max_nesting, kind.noun, kind.typical_nesting));
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// TextCodec reports a misspelled enum value only as "External constants not allowed",
/// without a position: find the first `field = name` whose name is no enumerant of field.
std::optional<error> find_bad_enumerant(std::string_view text, const std::string& source,
                                        capnp::StructSchema schema) {
  const auto fields = enum_fields_of(schema);
  std::string_view last_identifier;
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '#') {  // comment to end of line
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '"') {  // string literal
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
    } else if (is_identifier_start(c)) {
      std::size_t start = i;
      while (i < text.size() && is_identifier_char(text[i]))
        ++i;
      last_identifier = text.substr(start, i - start);
    } else if (c == '=') {
      auto field = std::string{last_identifier};
      std::size_t j = i + 1;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j])))
        ++j;
      std::size_t start = j;
      while (j < text.size() && is_identifier_char(text[j]))
        ++j;
      auto value = std::string{text.substr(start, j - start)};
      auto it = fields.find(field);
      if (it != fields.end() && !value.empty() && is_identifier_start(value[0])
          && !it->second.contains(value)) {
        std::string valid;
        for (const auto& name : it->second)
          valid += (valid.empty() ? "" : ", ") + name;
        auto [line, column] = position_of(text, start);
        return error_at(text, source, line, column,
                        fmt::format("'{}' is not a valid value for '{}' (expected one of: {})",
                                    value, field, valid));
      }
      ++i;
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

/// TextCodec descriptions of input errors start with "FROM-TO: ".
std::optional<std::size_t> leading_offset(std::string_view description) {
  std::size_t i = 0;
  std::size_t value = 0;
  while (i < description.size() && std::isdigit(static_cast<unsigned char>(description[i])))
    value = value * 10 + static_cast<std::size_t>(description[i++] - '0');
  if (i == 0 || i >= description.size() || description[i] != '-')
    return std::nullopt;
  return value;
}

std::string_view after_range(std::string_view description) {
  auto colon = description.find(": ");
  return colon == std::string_view::npos ? description : description.substr(colon + 2);
}

/// An open file descriptor, closed when it goes out of scope.
struct descriptor {
  explicit descriptor(int opened) : fd(opened) {}
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;
  ~descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
  const int fd;
};

} // namespace

result<std::string> read_text_file(const std::string& path, const text_file_kind& kind) {
  const descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  const int fd = file.fd;
  if (fd < 0)
    return error{fmt::format("{}: cannot open {}: {}", path, kind.noun, std::strerror(errno))};
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return error{fmt::format("{}: cannot read {}: {}", path, kind.noun, std::strerror(errno))};
  if (S_ISDIR(info.st_mode))
    return error{fmt::format("{}: is a folder, not a {}", path, kind.noun)};
  // Refused before reading: a data file passed by mistake would otherwise be read whole.
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > kind.max_bytes)
    return error{fmt::format("{}: {} is {} bytes, more than the {} a {} may have", path,
                             kind.noun, info.st_size, kind.max_bytes, kind.noun)};
  // Never more than one byte past the limit, whatever the file is (a device such as
  // /dev/zero, a pipe, a regular file that grew since fstat).
  std::string text(kind.max_bytes + 1, '\0');
  std::size_t filled = 0;
  while (filled < text.size()) {
    const auto got = ::read(fd, text.data() + filled, text.size() - filled);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return error{fmt::format("{}: cannot read {}: {}", path, kind.noun, std::strerror(errno))};
    if (got == 0)
      break;
    filled += static_cast<std::size_t>(got);
  }
  if (filled > kind.max_bytes)
    return error{fmt::format("{}: {} is more than the {} bytes a {} may have "
                             "(stopped reading at {} bytes)",
                             path, kind.noun, kind.max_bytes, kind.noun, filled)};
  text.resize(filled);
  return text;
}

result<void> decode_capnp_text(std::string_view text, const std::string& source,
                               const text_file_kind& kind, capnp::DynamicStruct::Builder root) {
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return error{fmt::format("{}: {} contains a NUL byte at offset {}: not a text file", source,
                             kind.noun, nul)};
  if (auto too_deep = find_too_deep(text, source, kind))
    return *too_deep;
  std::string owned{text};  // TextCodec needs a NUL-terminated string
  capnp::TextCodec codec;
  kj::Maybe<kj::Exception> failure = kj::runCatchingExceptions([&] {
    codec.decode(kj::StringPtr{owned.c_str(), owned.size()}, root);
  });
  KJ_IF_MAYBE (e, failure) {
    std::string_view description{e->getDescription().cStr()};
    // Input errors carry the line in the exception and "COLUMN-END: " in the description,
    // the column counted from the preceding newline (so 0-based on the first line only).
    if (auto column = leading_offset(description)) {
      const auto line = static_cast<std::size_t>(e->getLine());
      return error_at(text, source, line, line == 1 ? *column + 1 : *column,
                      after_range(description));
    }
    if (auto bad = find_bad_enumerant(text, source, root.getSchema()))
      return *bad;
    return error{fmt::format("{}: {}", source, description)};
  }
  return success();
}

} // namespace strom::runtime
