#pragma once
// Adam (Kingma & Ba, 2015, "Adam: A Method for Stochastic Optimization"), with the paper's
// bias correction and epsilon added outside the square root.

#include "strom/compute/updaters/updater.hpp"

namespace strom::compute {

/// Adam's hyper-parameters; defaults are the paper's (Algorithm 1).
struct adam_options {
  float beta1 = 0.9f;     ///< decay of the first moment, in [0, 1)
  float beta2 = 0.999f;   ///< decay of the second moment, in [0, 1)
  float epsilon = 1e-8f;  ///< added to sqrt(v^) to keep the division finite
};

/// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²; update = lr * m^ / (sqrt(v^) + eps)
/// with m^ = m / (1 - b1^t), v^ = v / (1 - b2^t), t = iteration + 1   (state: m[n] then v[n])
class adam_updater final : public updater {
public:
  explicit adam_updater(adam_options options = {}) : options_(options) {}

  /// The options this updater was built with.
  const adam_options& options() const noexcept { return options_; }
  /// Two moments per parameter: 2 * parameters.
  std::size_t state_size(std::size_t parameters) const override;
  /// Advances both moments and turns the gradient into the bias-corrected Adam step.
  void compute_update(std::span<float> gradient, std::span<float> state,
                      const step_context& step) const override;
  /// compute_update and the subtraction in one pass.
  void apply_step(std::span<float> gradient, std::span<float> state, const step_context& step,
                  std::span<float> parameters) const override;
  /// compute_update and the threshold scan in one pass where the CPU has AVX-512F
  /// (adam_scan_avx512); two passes otherwise.
  std::size_t scan_step(std::span<float> gradient, std::span<float> state,
                        const step_context& step, const threshold_scan_args& scan) const override;
  /// The first moment m: the first `parameters` floats of the state.
  std::span<float> momentum(std::span<float> state, std::size_t parameters) const override;

private:
  adam_options options_;
};

} // namespace strom::compute
