#pragma once
// AdaGrad on the GPU (updaters/ada_grad.hpp). State: the accumulated squares h[n].

#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/updaters/ada_grad.hpp"

namespace strom::compute::cuda {

/// h = h + g²; update = lr * g / (sqrt(h) + eps), as ada_grad_updater.
class ada_grad_device_updater final : public device_updater {
public:
  explicit ada_grad_device_updater(ada_grad_options options) : options_(options) {}

private:
  void step_on(float* gradient, float* state, float* parameters, std::size_t n,
               const step_context& step, cuda_context& ctx) const override;

  ada_grad_options options_;
};

} // namespace strom::compute::cuda
