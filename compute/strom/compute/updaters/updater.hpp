#pragma once
// The updater contract (Deeplearning4j's GradientUpdater): it turns a gradient into the
// update that is subtracted from the parameters. Keeping "compute the update" apart from
// "apply it" is what lets gradient sharing encode, send and apply updates instead of
// gradients; apply_step and scan_step put the two back together in one pass where an updater
// can (the update is then never stored). Updater state is one flat buffer laid out like the
// parameters.

#include <cstddef>
#include <cstdint>
#include <span>

#include "strom/compute/codecs/threshold_codec.hpp"

namespace strom::compute {

/// Where the training is when an update is computed.
struct step_context {
  std::uint64_t iteration = 0;  ///< updater steps taken before this one (0-based)
  std::uint32_t epoch = 0;      ///< epochs completed before this one (0-based)
  float learning_rate = 0.01f;  ///< the rate for this step, after any schedule
};

/// Turns gradients into updates, keeping its own flat state (moments, caches).
class updater {
public:
  virtual ~updater() = default;

  /// Floats of state needed for a model of `parameters` floats.
  virtual std::size_t state_size(std::size_t parameters) const = 0;
  /// Initial state values (zeros for every updater here).
  virtual void initialize_state(std::span<float> state) const;
  /// Replaces `gradient` in place by the update to subtract from the parameters, and advances
  /// `state`; `state` has state_size(gradient.size()) floats.
  virtual void compute_update(std::span<float> gradient, std::span<float> state,
                              const step_context& step) const = 0;
  /// compute_update, then parameters -= update: plain training. An updater with a kernel
  /// that does both in one pass (Adam) overrides it and leaves `gradient` unspecified, since
  /// the update is never stored. Both step functions throw std::invalid_argument when the
  /// parameters (the residual) are not as long as the gradient.
  virtual void apply_step(std::span<float> gradient, std::span<float> state,
                          const step_context& step, std::span<float> parameters) const;
  /// compute_update, then threshold_scan of the update into `scan` (gradient sharing); returns
  /// the scan's count. An updater with a kernel that does both in one pass (Adam, on
  /// AVX-512F) overrides it and leaves `gradient` unspecified.
  virtual std::size_t scan_step(std::span<float> gradient, std::span<float> state,
                                const step_context& step, const threshold_scan_args& scan) const;
  /// The part of `state` (of a model of `parameters` floats) that carries past gradients
  /// into future updates, laid out like the parameters: the first moment or the velocity.
  /// Empty for updaters without momentum.
  virtual std::span<float> momentum(std::span<float> state, std::size_t parameters) const;
};

/// Subtracts an update from the parameters: parameters -= update.
void apply_update(std::span<float> parameters, std::span<const float> update);

} // namespace strom::compute
