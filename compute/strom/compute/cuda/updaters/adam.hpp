#pragma once
// Adam on the GPU (updaters/adam.hpp): the same bias-corrected step, state m[n] then v[n].

#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/updaters/adam.hpp"

namespace strom::compute::cuda {

/// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²; update = lr * m^ / (sqrt(v^) + eps), as
/// adam_updater.
class adam_device_updater final : public device_updater {
public:
  explicit adam_device_updater(adam_options options) : options_(options) {}

private:
  void step_on(float* gradient, float* state, float* parameters, std::size_t n,
               const step_context& step, cuda_context& ctx) const override;

  adam_options options_;
};

} // namespace strom::compute::cuda
