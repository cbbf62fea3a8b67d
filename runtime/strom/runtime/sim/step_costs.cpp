#include "strom/runtime/sim/step_costs.hpp"

#include <algorithm>
#include <cmath>

namespace strom::runtime::sim {

std::uint64_t steps_per_epoch(const step_costs& costs, std::uint64_t workers) {
  const std::uint64_t per_step = std::max<std::uint64_t>(1, workers * costs.batch_size);
  return std::max<std::uint64_t>(1, (costs.samples_per_epoch + per_step - 1) / per_step);
}

double single_worker_samples_per_second(const step_costs& costs) {
  return costs.batch_size / costs.step_seconds;
}

step_costs costs_at(const calibration_table& table, double density) {
  step_costs out = table.base;
  out.density = density > 0 ? density : table.measured_density;
  const auto& points = table.points;
  if (points.empty())
    return out;
  auto set = [&out](const density_point& p) {
    out.encode_seconds = p.encode_seconds;
    out.decode_seconds = p.decode_seconds;
    out.frame_bytes = p.frame_bytes;
  };
  if (out.density <= points.front().density) {
    set(points.front());
    return out;
  }
  if (out.density >= points.back().density) {
    set(points.back());
    return out;
  }
  const auto upper = std::find_if(points.begin(), points.end(),
                                  [&](const density_point& p) { return p.density >= out.density; });
  const auto& hi = *upper;
  const auto& lo = *(upper - 1);
  const double f = (out.density - lo.density) / (hi.density - lo.density);
  out.encode_seconds = lo.encode_seconds + f * (hi.encode_seconds - lo.encode_seconds);
  out.decode_seconds = lo.decode_seconds + f * (hi.decode_seconds - lo.decode_seconds);
  out.frame_bytes = static_cast<std::uint64_t>(std::llround(
    static_cast<double>(lo.frame_bytes)
    + f * (static_cast<double>(hi.frame_bytes) - static_cast<double>(lo.frame_bytes))));
  return out;
}

} // namespace strom::runtime::sim
