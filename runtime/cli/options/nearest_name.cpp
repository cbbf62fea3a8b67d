#include "nearest_name.hpp"

#include <algorithm>

namespace strom::cli {

namespace {

/// Levenshtein distance: insertions, deletions and substitutions.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const auto above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

std::optional<std::string> nearest_name(std::string_view typed,
                                        const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const auto& name : known)
    if (const auto d = edit_distance(typed, name); d < best_distance) {
      best = name;
      best_distance = d;
    }
  return best;
}

} // namespace strom::cli
