#pragma once
// Batch normalisation (Ioffe and Szegedy, 2015) with per-channel statistics over the batch,
// height and width; a flat input of shape {c, 1, 1} is normalised per feature. In a pipeline
// stage each micro-batch is normalised over its own samples, as GPipe does.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "strom/compute/layer.hpp"
#include "strom/compute/layers/workspace.hpp"

namespace strom::compute {

/// Batch normalisation; parameters gamma [c] then beta [c], state running mean [c] then
/// running variance [c].
class batch_normalization final : public layer {
public:
  /// Running statistics follow running = momentum * running + (1 - momentum) * batch;
  /// throws std::invalid_argument unless momentum is in [0, 1] and epsilon > 0.
  batch_normalization(shape input, float momentum, float epsilon);

  // -- description -----------------------------------------------------------------------

  /// "batch_normalization".
  std::string kind() const override;
  /// The input shape.
  shape output_shape() const override;
  /// 2 * channels (gamma, beta).
  std::size_t parameter_count() const override;
  /// 2 * channels (running mean, running variance).
  std::size_t state_count() const override;
  /// The weight of the old running statistics in each update.
  float momentum() const noexcept { return momentum_; }
  /// Added to the variance before the square root.
  float epsilon() const noexcept { return epsilon_; }

  // -- set-up ----------------------------------------------------------------------------

  /// gamma = 1, beta = 0, running mean = 0, running variance = 1.
  void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const override;
  /// Keeps the parameter, gradient and state slices.
  void bind(std::span<float> parameters, std::span<float> gradients,
            std::span<float> state) override;
  /// Sizes the per-channel batch statistics, a slot for each row a batch may start at.
  void reserve(std::size_t max_batch) override;
  /// 2 * channels * max_batch floats.
  std::size_t workspace_bytes(std::size_t max_batch) const override;

  // -- the step --------------------------------------------------------------------------

  /// Training: normalise with the batch statistics and update the running ones (unbiased
  /// variance, as PyTorch); inference: normalise with the running statistics.
  void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
               pass mode) override;
  /// Gradients through the batch statistics of the last training forward of `rows`.
  void backward(std::span<const float> input, std::span<const float> output,
                std::span<const float> output_gradient, std::span<float> input_gradient,
                batch_rows rows) override;

private:
  /// Where the statistics of the batch at `rows` are kept in `kept` (a channel's each).
  static float* statistics_of(workspace<float>& kept, batch_rows rows);
  /// out = in * scale + shift over channel c of every sample.
  void transform(const float* input, float* output, std::size_t batch, std::size_t c,
                 float scale, float shift) const;

  shape shape_;
  float momentum_;
  float epsilon_;
  std::span<float> parameters_;
  std::span<float> gradients_;
  std::span<float> state_;
  /// Per channel, the mean and 1 / sqrt(variance + epsilon) of a training batch, kept at
  /// the batch's first row (statistics_of).
  workspace<float> batch_mean_;
  workspace<float> batch_inv_std_;
};

} // namespace strom::compute
