#pragma once
// Nesterov momentum in PyTorch's formulation (SGD with nesterov=True, dampening=0): the step
// looks ahead along the updated velocity, without a second gradient evaluation.

#include "strom/compute/updaters/momentum.hpp"

namespace strom::compute {

/// v = mu * v + g; update = lr * (g + mu * v)   (state: v[n])
class nesterov_updater final : public momentum_updater {
public:
  explicit nesterov_updater(momentum_options options = {}) : momentum_updater(options, true) {}
};

} // namespace strom::compute
