#include "arguments.hpp"

#include "commands.hpp"
#include "nearest_name.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace strom::cli {

std::optional<std::string> arguments::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return std::nullopt;
  return it->second;
}

result<std::optional<std::uint64_t>> arguments::get_uint(const std::string& name, std::uint64_t min,
                                                         std::uint64_t max) const {
  auto text = get(name);
  if (!text)
    return std::optional<std::uint64_t>{};
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || end != text->data() + text->size())
    return error{fmt::format("--{}: '{}' is not a non-negative integer", name, *text)};
  if (value < min || value > max)
    return error{fmt::format("--{}: {} is outside [{}, {}]", name, value, min, max)};
  return std::optional<std::uint64_t>{value};
}

result<std::optional<std::chrono::milliseconds>> arguments::get_duration(
  const std::string& name, std::chrono::milliseconds min, std::chrono::milliseconds max,
  std::chrono::milliseconds bare) const {
  using std::chrono::milliseconds;
  auto text = get(name);
  if (!text)
    return std::optional<milliseconds>{};
  std::uint64_t count = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), count);
  const std::string_view unit{end, static_cast<std::size_t>(text->data() + text->size() - end)};
  const std::uint64_t unit_ms = unit.empty()  ? static_cast<std::uint64_t>(bare.count())
                                : unit == "ms" ? 1
                                : unit == "s"  ? 1000
                                : unit == "m"  ? 60'000
                                               : 0;
  if (ec != std::errc{} || end == text->data() || unit_ms == 0)
    return error{fmt::format("--{}: '{}' is not a duration (e.g. 500ms, 90s, 2m)", name, *text)};
  const auto value = milliseconds(count * unit_ms);
  // Compared in counts first: count * unit_ms must not wrap before the range check.
  if (count > static_cast<std::uint64_t>(max.count()) || value < min || value > max)
    return error{fmt::format("--{}: {} is outside [{} ms, {} ms]", name, *text, min.count(),
                             max.count())};
  return std::optional<milliseconds>{value};
}

result<runtime::endpoint> arguments::get_endpoint(const std::string& name) const {
  auto text = get(name);
  if (!text)
    return error{fmt::format("--{} HOST:PORT is required", name)};
  auto parsed = runtime::parse_endpoint(*text);
  if (!parsed)
    return error{fmt::format("--{}: {}", name, parsed.err().message)};
  return parsed;
}

std::optional<float> parse_finite_float(const std::string& text) {
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

result<std::uint64_t> parse_job_id(const std::string& text) {
  std::uint64_t job_id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), job_id);
  if (ec != std::errc{} || end != text.data() + text.size())
    return error{fmt::format("job id '{}' is not a non-negative integer", text)};
  return job_id;
}

result<arguments> parse_arguments(const command_spec& spec, int argc, char** argv) {
  arguments parsed;
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    if (is_help_flag(argv[i]) || word == "--help-all") {
      parsed.values_["help"] = "";
      if (word == "--help-all")
        parsed.values_["help-all"] = "";
      return parsed;
    }
    if (word.rfind("--", 0) != 0 || word.size() == 2) {
      parsed.positionals_.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = std::find_if(spec.options.begin(), spec.options.end(),
                           [&](const option_spec& o) { return o.name == name; });
    if (it == spec.options.end()) {
      std::vector<std::string> known;
      for (const auto& o : spec.options)
        known.push_back(o.name);
      const auto near = nearest_name(name, known);
      return error{fmt::format("unknown option --{}{} (see '{} --help')", name,
                               near ? fmt::format("; did you mean --{}?", *near) : "",
                               spec.usage.substr(0, spec.usage.find(' ', 6)))};
    }
    if (it->value_name.empty()) {
      if (inline_value)
        return error{fmt::format("--{} takes no value", name)};
      parsed.values_[name] = "";
    } else if (inline_value) {
      parsed.values_[name] = *inline_value;
    } else if (i + 1 < argc) {
      parsed.values_[name] = argv[++i];
    } else {
      return error{fmt::format("--{} needs a value ({})", name, it->value_name)};
    }
  }
  const auto given = parsed.positionals_.size();
  const auto most = spec.positionals + spec.optional_positionals;
  if (given < spec.positionals || given > most)
    return error{fmt::format("expected {}{} argument{}, got {}: usage: {}", spec.positionals,
                             most == spec.positionals ? "" : fmt::format(" to {}", most),
                             most == 1 && spec.positionals == 1 ? "" : "s", given, spec.usage)};
  return parsed;
}

bool is_help_flag(const char* word) {
  return std::strcmp(word, "--help") == 0 || std::strcmp(word, "-h") == 0;
}

std::string help_entry(const std::string& term, std::size_t column, const std::string& text) {
  const std::string indent(column, ' ');
  std::string out = term.size() < column ? term + std::string(column - term.size(), ' ')
                                         : term + "\n" + indent;
  const auto width = help_columns > column + 20 ? help_columns - column : 20;
  std::size_t line = 0;  // characters on the current line after the indent
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = std::min(text.find(' ', at), text.size());
    const auto word = std::string_view{text}.substr(at, end - at);
    if (line > 0 && line + 1 + word.size() > width) {
      out += "\n" + indent;
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    at = end + 1;
  }
  return out + "\n";
}

std::string help_text(const command_spec& spec, bool with_testing_aids) {
  std::string text = help_entry("usage:", 7, spec.usage) + fmt::format("\n{}\n", spec.summary);
  if (!spec.options.empty())
    text += "\noptions:\n";
  bool hidden = false;
  for (const auto& o : spec.options) {
    if (o.testing_aid && !with_testing_aids) {
      hidden = true;
      continue;
    }
    auto flag = o.value_name.empty() ? fmt::format("  --{}", o.name)
                                     : fmt::format("  --{} {}", o.name, o.value_name);
    text += help_entry(flag, 29, o.help);
  }
  if (hidden)
    text += "\n--help-all also lists the testing aids (options that slow nodes down on purpose).\n";
  return text;
}

parsed_command parse_command(const command_spec& spec, const char* name, int argc, char** argv) {
  auto args = parse_arguments(spec, argc, argv);
  if (!args) {
    fmt::print(stderr, "{}: {}\n", name, args.err().message);
    return {std::nullopt, exit_usage};
  }
  if (args->has("help")) {
    fmt::print("{}", help_text(spec, args->has("help-all")));
    return {std::nullopt, exit_ok};
  }
  return {std::move(*args), exit_ok};
}

} // namespace strom::cli
