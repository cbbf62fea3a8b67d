#include "strom/runtime/job_spec.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capnp/schema.h>
#include <capnp/serialize-text.h>
#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "strom/actors/topology.hpp"
#include "strom/compute/codecs/threshold_encoder_from_spec.hpp"
#include "strom/compute/model_from_spec.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/compute/updaters/updater_from_spec.hpp"

namespace strom::runtime {

namespace {

/// Job files are small; anything larger is a mistake (a data file passed as a job).
constexpr std::size_t max_job_file_bytes = 1 << 20;

/// Cap'n Proto's text parser recurses once per ( or [ and has no depth limit of its own: a
/// few thousand levels overflow the stack. A job needs 6 (Job > training > updater > schedule
/// > step > value); 64 leaves room for any schema growth and stays far from the stack's end,
/// under AddressSanitizer's larger frames too.
constexpr std::size_t max_job_nesting_depth = 64;

/// Workers per node a job may ask for: the bound of `strom train --workers`
/// (runtime/cli/commands.hpp).
constexpr std::uint32_t max_workers_per_node = 1024;

/// A job's name becomes its checkpoint's file name (NAME.ckpt): at most this many bytes
/// keeps it within the 255 bytes file systems allow.
constexpr std::size_t max_job_name_bytes = 200;

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

/// Quoted lines are cut to this many characters around the column: a one-line job file of
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

/// Where the text nests ( [ { deeper than max_job_nesting_depth, skipping # comments and
/// string literals as Cap'n Proto's lexer does. A literal ends at a newline too: the lexer
/// refuses a newline inside one, so counting on from there errs towards refusing.
std::optional<error> find_too_deep(std::string_view text, const std::string& source) {
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
      if (++depth > max_job_nesting_depth) {
        auto [line, column] = position_of(text, i);
        return error_at(text, source, line, column,
                        fmt::format("nested more than {} levels deep (a job needs fewer than 10)",
                                    max_job_nesting_depth));
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

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
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return error{fmt::format("{}: job text contains a NUL byte at offset {}: not a text file",
                             source, nul)};
  if (auto too_deep = find_too_deep(text, source))
    return *too_deep;
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

result<std::string> read_job_file(const std::string& path) {
  const descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  const int fd = file.fd;
  if (fd < 0)
    return error{fmt::format("{}: cannot open job file: {}", path, std::strerror(errno))};
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return error{fmt::format("{}: cannot read job file: {}", path, std::strerror(errno))};
  if (S_ISDIR(info.st_mode))
    return error{fmt::format("{}: is a folder, not a job file", path)};
  // Refused before reading: a data file passed by mistake would otherwise be read whole.
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > max_job_file_bytes)
    return error{fmt::format("{}: job file is {} bytes, more than the {} a job file may have",
                             path, info.st_size, max_job_file_bytes)};
  // Never more than one byte past the limit, whatever the file is (a device such as
  // /dev/zero, a pipe, a regular file that grew since fstat).
  std::string text(max_job_file_bytes + 1, '\0');
  std::size_t filled = 0;
  while (filled < text.size()) {
    const auto got = ::read(fd, text.data() + filled, text.size() - filled);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return error{fmt::format("{}: cannot read job file: {}", path, std::strerror(errno))};
    if (got == 0)
      break;
    filled += static_cast<std::size_t>(got);
  }
  if (filled > max_job_file_bytes)
    return error{fmt::format("{}: job file is more than the {} bytes a job file may have "
                             "(stopped reading at {} bytes)",
                             path, max_job_file_bytes, filled)};
  text.resize(filled);
  return text;
}

result<void> check_job(const job_spec& job) {
  auto spec = job.reader();
  auto prefixed = [&](const error& e) {
    return error{fmt::format("{}: {}", job.source(), e.message)};
  };
  const std::string_view name{spec.getName().cStr(), spec.getName().size()};
  if (name.size() > max_job_name_bytes || name.find('/') != std::string_view::npos
      || name.starts_with('.'))
    return error{fmt::format("{}: name: '{}' cannot name a checkpoint file (at most {} bytes, "
                             "no '/', not starting with '.')",
                             job.source(), name.substr(0, max_job_name_bytes), max_job_name_bytes)};
  // The same checks as building a worker would run, without building anything large.
  if (auto ok = compute::check_training(spec.getTraining()); !ok)
    return prefixed(ok.err());
  if (auto layers = compute::make_layers(spec.getNetwork(), 0); !layers)
    return prefixed(layers.err());
  if (auto rule = compute::make_updater(spec.getTraining().getUpdater()); !rule)
    return prefixed(rule.err());
  if (auto schedule = compute::make_schedule(spec.getTraining().getUpdater()); !schedule)
    return prefixed(schedule.err());
  // Checked even when one worker will not share: the job may run on more later.
  auto distributed = spec.getDistributed();
  if (auto sharing = compute::make_threshold_encoder_options(distributed.getSharing()); !sharing)
    return prefixed(sharing.err());
  const auto workers = distributed.getWorkersPerNode();
  if (workers < 1 || workers > max_workers_per_node)
    return error{fmt::format("{}: distributed.workersPerNode: {} is outside [1, {}]",
                             job.source(), workers, max_workers_per_node)};
  const auto fanout = distributed.getFanout();
  if (fanout < 1 || fanout > actors::max_fanout)
    return error{fmt::format("{}: distributed.fanout: {} is outside [1, {}]", job.source(),
                             fanout, actors::max_fanout)};
  if (distributed.getReplicas() != 1)
    return error{fmt::format("{}: distributed.replicas: {}: chain replication of key ranges is "
                             "not built yet; only 1 replica is",
                             job.source(), distributed.getReplicas())};
  if (distributed.getBigArrayBound() == 0)
    return error{fmt::format("{}: distributed.bigArrayBound: must be at least 1, got 0",
                             job.source())};
  if (const auto two_bit = distributed.getTwoBitThreshold(); !(two_bit > 0.0f) || !std::isfinite(two_bit))
    return error{fmt::format("{}: distributed.twoBitThreshold: {} must be a positive number",
                             job.source(), two_bit)};
  if (distributed.getKvstore() == schema::KvStoreSync::DIST_ASYNC
      && !distributed.getServerOptimizer())
    return error{fmt::format("{}: distributed.serverOptimizer: false needs kvstore dist_sync: "
                             "with dist_async every worker would apply different gradients",
                             job.source())};
  const auto frequency = distributed.getAveragingFrequency();
  if (frequency < 1 || frequency > max_averaging_frequency)
    return error{fmt::format("{}: distributed.averagingFrequency: {} is outside [1, {}]",
                             job.source(), frequency, max_averaging_frequency)};
  return success();
}

actors::topology_options topology_of(const job_spec& job) {
  const auto distributed = job.reader().getDistributed();
  actors::topology_options options;
  switch (distributed.getTopology()) {
    case schema::Topology::PLAIN: options.kind = actors::topology_kind::plain; break;
    case schema::Topology::MESH: options.kind = actors::topology_kind::mesh; break;
    case schema::Topology::AUTO: options.kind = actors::topology_kind::automatic; break;
  }
  options.fanout = distributed.getFanout();
  return options;
}

schema::Topology to_schema(actors::topology_kind kind) {
  switch (kind) {
    case actors::topology_kind::mesh: return schema::Topology::MESH;
    case actors::topology_kind::automatic: return schema::Topology::AUTO;
    case actors::topology_kind::plain: break;
  }
  return schema::Topology::PLAIN;
}

const char* to_string(schema::TrainingMode mode) {
  switch (mode) {
    case schema::TrainingMode::AVERAGING: return "averaging";
    case schema::TrainingMode::KVSTORE: return "kvstore";
    case schema::TrainingMode::SHARED: break;
  }
  return "shared";
}

result<schema::TrainingMode> parse_training_mode(std::string_view text) {
  for (auto mode : {schema::TrainingMode::SHARED, schema::TrainingMode::AVERAGING,
                    schema::TrainingMode::KVSTORE})
    if (text == to_string(mode))
      return mode;
  return error{fmt::format("mode '{}' is not shared, averaging or kvstore", text)};
}

result<job_spec> load_job_file(const std::string& path) {
  auto text = read_job_file(path);
  if (!text)
    return text.err();
  auto dir = std::filesystem::path{path}.parent_path().string();
  auto job = parse_job_text(*text, path, dir.empty() ? "." : dir);
  if (!job)
    return job;
  if (auto ok = check_job(*job); !ok)
    return ok.err();
  return job;
}

} // namespace strom::runtime
