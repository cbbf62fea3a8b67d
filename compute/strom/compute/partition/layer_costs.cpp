#include "strom/compute/partition/layer_costs.hpp"

#include "strom/compute/saturating.hpp"

namespace strom::compute {

std::uint64_t layer_cost::resident_bytes() const noexcept {
  std::uint64_t sum = 0;
  for (auto part : {parameter_bytes, gradient_bytes, model_state_bytes, updater_state_bytes})
    sum = saturating_add(sum, part);
  return sum;
}

} // namespace strom::compute
