#pragma once
// An updater on the GPU: the same rule and the same flat state layout as its host updater
// (compute/updaters/updater.hpp), so updater state copies between host and device as one
// block and a run can move between backends.

#include <cstddef>
#include <memory>
#include <span>

#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/device/engine_spec.hpp"
#include "strom/compute/layer.hpp"
#include "strom/compute/updaters/updater.hpp"

namespace strom::compute::cuda {

class device_updater {
public:
  virtual ~device_updater() = default;
  /// Replaces gradient[n] in place by the update to subtract and advances `state` (laid out
  /// as the host updater's state for n parameters).
  void compute_update(float* gradient, float* state, std::size_t n, const step_context& step,
                      cuda_context& ctx) const {
    step_on(gradient, state, nullptr, n, step, ctx);
  }
  /// compute_update then parameters -= update, in one kernel; `gradient` is left as the host
  /// updater's apply_step leaves it.
  void apply_step(float* gradient, float* state, float* parameters, std::size_t n,
                  const step_context& step, cuda_context& ctx) const {
    step_on(gradient, state, parameters, n, step, ctx);
  }

private:
  /// The rule's one kernel: the update into `gradient` where `parameters` is null, else
  /// subtracted from `parameters` in the same pass.
  virtual void step_on(float* gradient, float* state, float* parameters, std::size_t n,
                       const step_context& step, cuda_context& ctx) const = 0;
};

/// The device updater `spec` describes (device_updater_spec_of reads one off a host updater).
std::unique_ptr<device_updater> make_device_updater(const device_updater_spec& spec);

/// gradients += l2 * parameters over `ranges` (the host add_l2).
void add_l2(const float* parameters, float* gradients, std::span<const float_range> ranges,
            float l2, cuda_context& ctx);
/// parameters[n] -= update[n] (the host apply_update).
void subtract(float* parameters, const float* update, std::size_t n, cuda_context& ctx);

} // namespace strom::compute::cuda
