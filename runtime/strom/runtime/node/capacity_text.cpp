#include "strom/runtime/node/capacity_text.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
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

namespace {

/// A whole number in [1, 2^32) from `text`; nullopt for anything else.
std::optional<std::uint32_t> positive_count(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value == 0)
    return std::nullopt;
  return value;
}

} // namespace

result<actors::speed_drift> parse_speed_drift(std::string_view text, std::string_view flag) {
  const auto at = text.find('@');
  if (at == std::string_view::npos)
    return error{fmt::format("{}: '{}' is not F@EPOCH (a speed factor from a 1-based epoch on)",
                             flag, text)};
  auto factor = parse_speed_factor(text.substr(0, at), flag);
  if (!factor)
    return factor.err();
  const auto epoch = positive_count(text.substr(at + 1));
  if (!epoch)
    return error{fmt::format("{}: '{}' is no epoch: epochs count from 1", flag,
                             text.substr(at + 1))};
  return actors::speed_drift{*factor, *epoch - 1};
}

result<std::vector<std::pair<std::uint32_t, actors::speed_drift>>>
parse_node_drifts(std::string_view text, std::uint32_t nodes, std::string_view flag) {
  std::vector<std::pair<std::uint32_t, actors::speed_drift>> drifts;
  std::size_t begin = 0;
  for (;;) {
    const auto comma = text.find(',', begin);
    const auto entry = text.substr(begin, comma - begin);
    const auto equals = entry.find('=');
    if (equals == std::string_view::npos)
      return error{fmt::format("{}: '{}' is not NODE=F@EPOCH", flag, entry)};
    const auto node = positive_count(entry.substr(0, equals));
    if (!node || *node > nodes)
      return error{fmt::format("{}: '{}' is no node of 1 to {}", flag, entry.substr(0, equals),
                               nodes)};
    for (const auto& [seen, drift] : drifts)
      if (seen + 1 == *node)
        return error{fmt::format("{}: node {} drifts twice", flag, *node)};
    auto drift = parse_speed_drift(entry.substr(equals + 1), flag);
    if (!drift)
      return drift.err();
    drifts.emplace_back(*node - 1, *drift);
    if (comma == std::string_view::npos)
      return drifts;
    begin = comma + 1;
  }
}

} // namespace strom::runtime
