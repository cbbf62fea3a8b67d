#include "strom/runtime/job_spec.hpp"

#include <capnp/schema.h>
#include <capnp/serialize-text.h>
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace strom::runtime {

namespace {

/// Job files are small; anything larger is a mistake (a data file passed as a job).
constexpr std::size_t max_job_file_bytes = 1 << 20;

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

error error_at(std::string_view text, const std::string& source, std::size_t line,
               std::size_t column, std::string_view problem) {
  return error{fmt::format("{}:{}:{}: {}\n    {}\n    {:>{}}", source, line, column, problem,
                           line_text(text, line), "^", column)};
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

/// For every field of an enum type anywhere in the Job schema: its valid enumerant names.
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

const enum_fields& job_enum_fields() {
  static const enum_fields fields = [] {
    enum_fields out;
    std::set<std::uint64_t> visited;
    collect_enum_fields(capnp::Schema::from<schema::Job>(), out, visited);
    return out;
  }();
  return fields;
}

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// TextCodec reports a misspelled enum value only as "External constants not allowed",
/// without a position: find the first `field = name` whose name is no enumerant of field.
std::optional<error> find_bad_enumerant(std::string_view text, const std::string& source) {
  const auto& fields = job_enum_fields();
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

/// Makes relative data paths absolute against the job file's folder, so the job means the
/// same thing wherever it travels (to other nodes, into checkpoints).
void resolve_data_paths(schema::Job::Builder job, const std::string& base_dir) {
  auto resolve = [&](capnp::Text::Reader text) {
    std::filesystem::path p{text.cStr()};
    if (p.empty() || p.is_absolute())
      return std::string{text.cStr()};
    return (std::filesystem::absolute(base_dir) / p).lexically_normal().string();
  };
  for (auto source : {job.getData().getTrain(), job.getData().getTest()}) {
    if (source.isIdx()) {
      auto idx = source.getIdx();
      idx.setImages(resolve(idx.getImages()));
      idx.setLabels(resolve(idx.getLabels()));
    } else if (source.isCsv()) {
      auto csv = source.getCsv();
      csv.setPath(resolve(csv.getPath()));
    }
  }
}

} // namespace

job_spec::job_spec(schema::Job::Reader job, std::string source)
  : message_(std::make_shared<capnp::MallocMessageBuilder>()), source_(std::move(source)) {
  message_->setRoot(job);
}

schema::Job::Reader job_spec::reader() const {
  return message_->getRoot<schema::Job>().asReader();
}

schema::Job::Builder job_spec::builder() { return message_->getRoot<schema::Job>(); }

result<job_spec> parse_job_text(std::string_view text, const std::string& source,
                                const std::string& base_dir) {
  capnp::MallocMessageBuilder message;
  auto job = message.initRoot<schema::Job>();
  std::string owned{text};  // TextCodec needs a NUL-terminated string
  capnp::TextCodec codec;
  kj::Maybe<kj::Exception> failure = kj::runCatchingExceptions([&] {
    codec.decode(kj::StringPtr{owned.c_str(), owned.size()}, capnp::toDynamic(job));
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
    if (auto bad = find_bad_enumerant(text, source))
      return *bad;
    return error{fmt::format("{}: {}", source, description)};
  }
  resolve_data_paths(job, base_dir);
  return job_spec{job.asReader(), source};
}

std::string to_text(const job_spec& job) {
  return capnp::TextCodec{}.encode(job.reader()).cStr();
}

result<job_spec> load_job_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return error{fmt::format("{}: cannot open job file: {}", path, std::strerror(errno))};
  std::ostringstream contents;
  contents << in.rdbuf();
  auto text = std::move(contents).str();
  if (text.size() > max_job_file_bytes)
    return error{fmt::format("{}: job file is {} bytes, more than the {} a job file may have", path,
                             text.size(), max_job_file_bytes)};
  if (text.find('\0') != std::string::npos)
    return error{fmt::format("{}: job file contains a NUL byte at offset {}: not a text file", path,
                             text.find('\0'))};
  auto dir = std::filesystem::path{path}.parent_path().string();
  return parse_job_text(text, path, dir.empty() ? "." : dir);
}

} // namespace strom::runtime
