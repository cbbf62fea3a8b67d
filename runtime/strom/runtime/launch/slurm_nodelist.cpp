#include "strom/runtime/launch/slurm_nodelist.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace strom::runtime::launch {

namespace {

/// Names one list may expand to: Slurm's largest clusters have some 10^4 nodes, so more is a
/// typo like "n[1-999999999]" that would exhaust memory.
constexpr std::uint64_t max_expanded_nodes = 1'000'000;

/// The top-level comma-separated items of `list` (commas inside brackets belong to a range).
result<std::vector<std::string_view>> items_of(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[' && ++depth > 1)
      return error{"nested '['"};
    if (c == ']' && --depth < 0)
      return error{"']' without '['"};
    if (c == ',' && depth == 0) {
      if (i == start)
        return error{"an empty name"};
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0)
    return error{"'[' without ']'"};
  return items;
}

result<std::uint64_t> bound_of(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return error{fmt::format("range bound '{}' is not a number", text)};
  return value;
}

/// The names one bracket group's body ("01-03,07") stands for.
result<std::vector<std::string>> expand_ranges(std::string_view body) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= body.size();) {
    const auto end = std::min(body.find(',', start), body.size());
    const auto range = body.substr(start, end - start);
    start = end + 1;
    const auto dash = range.find('-');
    const auto low_text = range.substr(0, dash);
    const auto high_text = dash == std::string_view::npos ? low_text : range.substr(dash + 1);
    auto low = bound_of(low_text);
    if (!low)
      return low.err();
    auto high = bound_of(high_text);
    if (!high)
      return high.err();
    if (*high < *low)
      return error{fmt::format("range '{}' runs backwards", range)};
    if (*high - *low >= max_expanded_nodes)
      return error{fmt::format("range '{}' names more than {} nodes", range, max_expanded_nodes)};
    for (auto n = *low; n <= *high; ++n)
      names.push_back(fmt::format("{:0{}}", n, low_text.size()));
  }
  return names;
}

/// Every name one item ("r[1-2]n[1-2]") stands for.
result<std::vector<std::string>> expand_item(std::string_view item) {
  std::vector<std::string> names{""};
  while (!item.empty()) {
    const auto open = item.find('[');
    const auto prefix = item.substr(0, open);
    for (auto& name : names)
      name += prefix;
    if (open == std::string_view::npos)
      break;
    const auto close = item.find(']', open);
    auto parts = expand_ranges(item.substr(open + 1, close - open - 1));
    if (!parts)
      return parts.err();
    if (names.size() * parts->size() > max_expanded_nodes)
      return error{fmt::format("names more than {} nodes", max_expanded_nodes)};
    std::vector<std::string> product;
    for (const auto& name : names)
      for (const auto& part : *parts)
        product.push_back(name + part);
    names = std::move(product);
    item.remove_prefix(close + 1);
  }
  return names;
}

result<std::uint32_t> task_number(const char* variable, const char* text, std::uint32_t min) {
  std::uint32_t value = 0;
  const std::string_view view{text};
  auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (view.empty() || ec != std::errc{} || end != view.data() + view.size() || value < min)
    return error{fmt::format("{}='{}' is not a number of at least {}", variable, text, min)};
  return value;
}

} // namespace

result<std::vector<std::string>> expand_slurm_nodelist(std::string_view nodelist) {
  auto items = items_of(nodelist);
  if (!items)
    return error{fmt::format("Slurm node list '{}': {}", nodelist, items.err().message)};
  std::vector<std::string> nodes;
  for (auto item : *items) {
    auto names = expand_item(item);
    if (!names)
      return error{fmt::format("Slurm node list '{}': '{}': {}", nodelist, item,
                               names.err().message)};
    nodes.insert(nodes.end(), names->begin(), names->end());
    if (nodes.size() > max_expanded_nodes)
      return error{fmt::format("Slurm node list '{}' names more than {} nodes", nodelist,
                               max_expanded_nodes)};
  }
  return nodes;
}

result<std::optional<slurm_task>> slurm_task_from_environment() {
  const char* procid = std::getenv("SLURM_PROCID");
  const char* list = std::getenv("SLURM_NODELIST");
  const char* list_name = "SLURM_NODELIST";
  if (!list) {
    list = std::getenv("SLURM_JOB_NODELIST");
    list_name = "SLURM_JOB_NODELIST";
  }
  if (!procid || !list)
    return std::optional<slurm_task>{};
  slurm_task task;
  auto nodes = expand_slurm_nodelist(list);
  if (!nodes)
    return error{fmt::format("{}: {}", list_name, nodes.err().message)};
  task.nodes = std::move(*nodes);
  auto rank = task_number("SLURM_PROCID", procid, 0);
  if (!rank)
    return rank.err();
  task.rank = *rank;
  if (const char* ntasks = std::getenv("SLURM_NTASKS")) {
    auto tasks = task_number("SLURM_NTASKS", ntasks, 1);
    if (!tasks)
      return tasks.err();
    task.tasks = *tasks;
  } else {
    task.tasks = static_cast<std::uint32_t>(task.nodes.size());
  }
  if (task.rank >= task.tasks)
    return error{fmt::format("SLURM_PROCID={} is not below SLURM_NTASKS={}", task.rank,
                             task.tasks)};
  return std::optional<slurm_task>{std::move(task)};
}

} // namespace strom::runtime::launch
