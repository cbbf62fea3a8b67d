#pragma once
// A small command-line parser: each command declares its options with their help text,
// so parsing, validation and --help come from one table.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strom/compute/result.hpp"
#include "strom/runtime/transport/endpoint.hpp"

namespace strom::cli {

/// One option a command accepts.
struct option_spec {
  std::string name;         ///< without dashes: "epochs"
  std::string value_name;   ///< "N"; empty for a flag
  std::string help;
  bool testing_aid = false;  ///< listed by --help-all only: it slows nodes down on purpose
};

/// A command's declaration.
struct command_spec {
  std::string usage;  ///< "strom train JOB [options]"
  std::string summary;
  std::vector<option_spec> options;
  std::size_t positionals = 0;  ///< positional arguments required
  std::size_t optional_positionals = 0;  ///< how many more may follow
};

/// Parsed arguments.
class arguments {
public:
  bool has(const std::string& name) const { return values_.contains(name); }
  std::optional<std::string> get(const std::string& name) const;
  /// The option as an unsigned integer in [min, max]; errors name the option and value.
  result<std::optional<std::uint64_t>> get_uint(const std::string& name, std::uint64_t min,
                                                std::uint64_t max) const;
  /// The option as a duration in [min, max]: a whole number with a unit, ms, s or m (e.g.
  /// 500ms, 90s, 2m); a bare number counts `bare` (seconds, or milliseconds for the options
  /// that took bare milliseconds before they took units). Errors name the option and value.
  result<std::optional<std::chrono::milliseconds>> get_duration(
    const std::string& name, std::chrono::milliseconds min, std::chrono::milliseconds max,
    std::chrono::milliseconds bare = std::chrono::seconds(1)) const;
  /// The option as HOST:PORT; errors when it is missing or malformed, naming the option.
  result<runtime::endpoint> get_endpoint(const std::string& name) const;
  const std::vector<std::string>& positionals() const noexcept { return positionals_; }

private:
  friend result<arguments> parse_arguments(const command_spec&, int, char**);
  std::map<std::string, std::string> values_;
  std::vector<std::string> positionals_;
};

/// `text`, whole, as a finite number; nullopt when it is not one (the caller names the option
/// and the range it wants).
std::optional<float> parse_finite_float(const std::string& text);

/// A job id given as a positional argument; the error names the text.
result<std::uint64_t> parse_job_id(const std::string& text);

/// Parses argv[first..]; "--help" yields an arguments object with has("help"), "--help-all"
/// one with has("help") and has("help-all").
result<arguments> parse_arguments(const command_spec& spec, int argc, char** argv);

/// The help text for a command; the testing aids only `with_testing_aids` (--help-all).
std::string help_text(const command_spec& spec, bool with_testing_aids = false);

/// Help's width: no line of help text is longer.
inline constexpr std::size_t help_columns = 100;

/// `term` in a column `column` wide (wider terms push the text to the next line) and `text`
/// beside it, wrapped at help_columns under itself; one line of help, or several, each ending
/// in a newline.
std::string help_entry(const std::string& term, std::size_t column, const std::string& text);

/// Whether `word` asks for help: --help or -h.
bool is_help_flag(const char* word);

/// A command's parsed arguments or, when it is to end at once, its exit status.
struct parsed_command {
  std::optional<arguments> args;
  int exit_status = 0;
};

/// The start every command shares: parse_arguments, then print a usage error as
/// "NAME: message" (exit_usage) or the help text for --help (exit_ok), leaving no arguments.
parsed_command parse_command(const command_spec& spec, const char* name, int argc, char** argv);

} // namespace strom::cli
