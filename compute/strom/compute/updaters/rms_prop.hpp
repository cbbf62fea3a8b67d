#pragma once
// RMSProp (Tieleman & Hinton, 2012, Coursera lecture 6.5) as in Deeplearning4j's RmsProp:
// epsilon outside the square root, no momentum, no centring.

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// RMSProp's hyper-parameters; defaults are Deeplearning4j's.
struct rms_prop_options {
  float decay = 0.95f;    ///< decay of the squared-gradient cache, in [0, 1)
  float epsilon = 1e-8f;  ///< added to sqrt(cache) to keep the division finite
};

/// cache = decay * cache + (1-decay) g²; update = lr * g / (sqrt(cache) + eps)   (state: cache[n])
class rms_prop_updater final : public updater {
public:
  explicit rms_prop_updater(rms_prop_options options = {}) : options_(options) {}

  /// The options this updater was built with.
  const rms_prop_options& options() const noexcept { return options_; }
  /// One cache value per parameter.
  std::size_t state_size(std::size_t parameters) const override;
  /// Advances the cache and divides the scaled gradient by its root.
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;

private:
  rms_prop_options options_;
};

} // namespace strom::compute
