#pragma once
// The line the benchmarks print: one JSON object, built with nlohmann/json (keys in the order
// they were set) so that strings are escaped properly, and flushed, since scripts read it while
// the benchmark runs.

#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace strom::bench {

using json = nlohmann::ordered_json;

/// Writes `line` as one line of stdout and flushes it.
inline void print_json(const json& line) {
  const std::string text = line.dump();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

/// `value` rounded to `digits` decimals, as the figures were printed before; non-finite as is.
inline double rounded(double value, int digits) {
  if (!std::isfinite(value))
    return value;
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

} // namespace strom::bench
