#pragma once
// RMSProp on the GPU (updaters/rms_prop.hpp). State: the mean-square cache[n].

#include "strom/compute/cuda/device_updater.hpp"
#include "strom/compute/updaters/rms_prop.hpp"

namespace strom::compute::cuda {

/// cache = decay * cache + (1-decay) g²; update = lr * g / (sqrt(cache) + eps), as
/// rms_prop_updater.
class rms_prop_device_updater final : public device_updater {
public:
  explicit rms_prop_device_updater(rms_prop_options options) : options_(options) {}

private:
  void step_on(float* gradient, float* state, float* parameters, std::size_t n,
               const step_context& step, cuda_context& ctx) const override;

  rms_prop_options options_;
};

} // namespace strom::compute::cuda
