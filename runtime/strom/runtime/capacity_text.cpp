#include "strom/runtime/capacity_text.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "strom/compute/saturating.hpp"

namespace strom::runtime {

namespace {

struct byte_unit {
  std::string_view suffix;
  std::uint64_t bytes;
};

constexpr std::uint64_t kibi = 1024;
constexpr std::uint64_t kilo = 1000;

constexpr std::array<byte_unit, 14> byte_units{{
  {"", 1},
  {"B", 1},
  {"K", kibi},
  {"M", kibi * kibi},
  {"G", kibi * kibi * kibi},
  {"T", kibi * kibi * kibi * kibi},
  {"KiB", kibi},
  {"MiB", kibi * kibi},
  {"GiB", kibi * kibi * kibi},
  {"TiB", kibi * kibi * kibi * kibi},
  {"kB", kilo},
  {"MB", kilo * kilo},
  {"GB", kilo * kilo * kilo},
  {"TB", kilo * kilo * kilo * kilo},
}};

} // namespace

result<std::uint64_t> parse_byte_count(std::string_view text, std::string_view flag) {
  std::uint64_t count = 0;
  const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), count);
  const auto bad = [&](std::string_view why) {
    return error{fmt::format("{}: '{}' {}", flag, text, why)};
  };
  if (problem == std::errc::result_out_of_range)
    return bad("is more bytes than 64 bits hold");
  if (problem != std::errc{} || end == text.data())
    return bad("is not a byte count (a whole number with K, M, G, T, KiB, MiB, GiB, TiB, kB, "
               "MB, GB or TB, e.g. 7MiB)");
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  for (const auto& unit : byte_units) {
    if (unit.suffix != suffix)
      continue;
    const auto bytes = compute::saturating_mul(count, unit.bytes);
    if (bytes == UINT64_MAX)
      return bad("is more bytes than 64 bits hold");
    if (bytes == 0)
      return bad("is no memory at all; give a positive size");
    return bytes;
  }
  return bad(fmt::format("has the unknown unit '{}' (K, M, G, T, KiB, MiB, GiB, TiB, kB, MB, GB "
                         "or TB)", suffix));
}

result<double> parse_speed_factor(std::string_view text, std::string_view flag) {
  const std::string copy(text);
  char* end = nullptr;
  const double factor = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(factor))
    return error{fmt::format("{}: '{}' is not a number", flag, text)};
  if (factor <= 0)
    return error{fmt::format("{}: {} is not positive; a node's speed factor is in (0, 1]", flag,
                             text)};
  if (factor > 1)
    return error{fmt::format("{}: {} is above 1: a node cannot be made faster by waiting; give "
                             "the other nodes factors below 1 instead", flag, text)};
  return factor;
}

result<std::vector<double>> parse_node_speeds(std::string_view text, std::uint32_t nodes,
                                              std::string_view flag) {
  std::vector<double> speeds;
  std::size_t begin = 0;
  for (;;) {
    const auto comma = text.find(',', begin);
    auto factor = parse_speed_factor(text.substr(begin, comma - begin), flag);
    if (!factor)
      return factor.err();
    speeds.push_back(*factor);
    if (comma == std::string_view::npos)
      break;
    begin = comma + 1;
  }
  if (speeds.size() != nodes)
    return error{fmt::format("{}: '{}' gives {} speed factor{} for {} node{}", flag, text,
                             speeds.size(), speeds.size() == 1 ? "" : "s", nodes,
                             nodes == 1 ? "" : "s")};
  return speeds;
}

} // namespace strom::runtime
