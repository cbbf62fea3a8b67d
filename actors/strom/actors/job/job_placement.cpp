#include "strom/actors/job/job_placement.hpp"

#include <algorithm>

namespace strom::actors {

std::optional<std::vector<double>> speed_corrections(const job_placement& placement,
                                                     std::span<const double> busy_seconds,
                                                     std::uint64_t steps) {
  const auto margin = placement.repartition_margin;
  if (!(margin > 0.0) || placement.pipelines != 1 || steps == 0
      || busy_seconds.size() != placement.stages.size() || placement.stages.empty())
    return std::nullopt;
  std::vector<double> ratios;
  for (std::size_t t = 0; t < placement.stages.size(); ++t) {
    const double measured = busy_seconds[t] / static_cast<double>(steps);
    const double predicted = placement.stages[t].predicted_seconds;
    if (!(measured > 0.0) || !(predicted > 0.0))
      return std::nullopt;
    ratios.push_back(measured / predicted);
  }
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  if (*high <= *low * (1.0 + margin))
    return std::nullopt;
  std::vector<double> scale;
  for (double ratio : ratios)
    scale.push_back(*low / ratio);
  return scale;
}

} // namespace strom::actors
