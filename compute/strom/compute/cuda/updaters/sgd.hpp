#pragma once
// Plain SGD on the GPU (updaters/sgd.hpp): no state.

#include "strom/compute/cuda/device_updater.hpp"

namespace strom::compute::cuda {

/// update = lr * g, as sgd_updater.
class sgd_device_updater final : public device_updater {
private:
  void step_on(float* gradient, float* state, float* parameters, std::size_t n,
               const step_context& step, cuda_context& ctx) const override;
};

} // namespace strom::compute::cuda
