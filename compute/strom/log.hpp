#pragma once
// strom's logging. Debian's CAF has its own logging compiled out, so every layer logs
// through this: leveled, formatted with fmt, one line per call to stderr (or a sink).

#include <fmt/format.h>

#include <functional>
#include <string_view>

namespace strom::log {

/// Severity, most verbose first.
enum class level { trace, debug, info, warning, error, off };

/// Messages below this level are dropped before formatting.
level threshold() noexcept;
void set_threshold(level lvl) noexcept;

/// Parses "trace", "debug", "info", "warning", "error" or "off"; false if unknown.
bool parse_level(std::string_view text, level& out) noexcept;

/// Where formatted lines go; the default writes "[time] LEVEL message" to stderr.
using sink = std::function<void(level, std::string_view)>;
void set_sink(sink s);

/// Writes one already formatted line.
void write(level lvl, std::string_view line);

template <class... Ts>
void emit(level lvl, fmt::format_string<Ts...> format, Ts&&... args) {
  if (lvl < threshold())
    return;
  write(lvl, fmt::format(format, std::forward<Ts>(args)...));
}

template <class... Ts>
void debug(fmt::format_string<Ts...> f, Ts&&... a) { emit(level::debug, f, std::forward<Ts>(a)...); }
template <class... Ts>
void info(fmt::format_string<Ts...> f, Ts&&... a) { emit(level::info, f, std::forward<Ts>(a)...); }
template <class... Ts>
void warning(fmt::format_string<Ts...> f, Ts&&... a) { emit(level::warning, f, std::forward<Ts>(a)...); }
template <class... Ts>
void error(fmt::format_string<Ts...> f, Ts&&... a) { emit(level::error, f, std::forward<Ts>(a)...); }

} // namespace strom::log
