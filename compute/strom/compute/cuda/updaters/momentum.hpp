#pragma once
// Momentum and Nesterov momentum on the GPU (updaters/momentum.hpp, updaters/nesterov.hpp):
// one kernel for both, as on the host. State: the velocity v[n].

#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/updaters/momentum.hpp"

namespace strom::compute::cuda {

/// v = mu * v + g; update = lr * v (momentum) or lr * (g + mu * v) (Nesterov, `look_ahead`).
class momentum_device_updater final : public device_updater {
public:
  momentum_device_updater(momentum_options options, bool look_ahead)
    : options_(options), look_ahead_(look_ahead) {}

private:
  void step_on(float* gradient, float* state, float* parameters, std::size_t n,
               const step_context& step, cuda_context& ctx) const override;

  momentum_options options_;
  bool look_ahead_;
};

} // namespace strom::compute::cuda
