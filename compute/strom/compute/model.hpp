#pragma once
// A feed-forward model: a sequence of layers over three flat buffers (parameters, gradients,
// non-trainable state). The flat layout is what codecs, averaging, sharding and snapshots
// work on; layers only ever see their own slices.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "strom/compute/layer.hpp"

namespace strom::compute {

/// Where one layer's slices lie in the model's flat buffers.
struct layer_slice {
  std::size_t parameter_offset = 0;
  std::size_t parameter_count = 0;
  std::size_t state_offset = 0;
  std::size_t state_count = 0;
};

/// Bytes model::reserve(max_batch) allocates for `layers` on `input`: each layer's output,
/// the two buffers of activation gradients and every layer's own workspace. Lets a job's
/// memory be estimated from its layers before the model allocates anything.
std::size_t batch_memory_bytes(shape input, std::span<const std::unique_ptr<layer>> layers,
                               std::size_t max_batch);

/// A sequential network whose last layer produces the logits of `classes` classes.
class model {
public:
  model(shape input, std::vector<std::unique_ptr<layer>> layers, std::size_t classes);
  model(const model&) = delete;
  model& operator=(const model&) = delete;

  // -- properties --------------------------------------------------------------------------

  /// Shape of one input sample.
  shape input_shape() const noexcept { return input_; }
  /// Number of output classes (width of the logits).
  std::size_t classes() const noexcept { return classes_; }
  /// The layers, first to last.
  std::span<const std::unique_ptr<layer>> layers() const noexcept { return layers_; }
  /// Each layer's place in the flat buffers.
  std::span<const layer_slice> slices() const noexcept { return slices_; }
  /// Ranges of the parameter buffer that L2 regularisation applies to.
  std::span<const float_range> regularized_ranges() const noexcept { return regularized_; }

  /// The flat trainable parameters.
  std::span<float> parameters() noexcept { return parameters_; }
  std::span<const float> parameters() const noexcept { return parameters_; }
  /// The flat gradients of the last compute_gradients call, laid out like parameters().
  std::span<float> gradients() noexcept { return gradients_; }
  /// The flat non-trainable state (batch-norm running statistics).
  std::span<float> state() noexcept { return state_; }
  std::span<const float> state() const noexcept { return state_; }

  // -- set-up ------------------------------------------------------------------------------

  /// Fills parameters and state from `seed`; equal seeds give equal models on every machine.
  /// A pipeline stage holding layers [first_layer, ...) of a network passes `first_layer`, so
  /// that its layers start from the values the whole network's would.
  void initialize(std::uint64_t seed, std::size_t first_layer = 0);
  /// Sizes every workspace for batches of up to max_batch samples (allocation happens here).
  void reserve(std::size_t max_batch);
  /// The largest batch reserve() prepared for.
  std::size_t max_batch() const noexcept { return max_batch_; }

  // -- computation (no allocation once reserved) -------------------------------------------

  /// Called during backward, after each layer, with the offset from which gradients() holds
  /// this batch's final values (its end is the buffer's): a parameter server's push of the
  /// later layers may leave while the earlier ones are computed.
  using gradients_ready = std::function<void(std::size_t from)>;

  /// Forward, softmax cross-entropy and backward on one batch; the gradients land in
  /// gradients(), and `ready` (when set) hears of them layer by layer. Returns the batch's
  /// mean loss.
  float compute_gradients(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t batch, const gradients_ready& ready = {});
  /// Inference forward pass; returns the logits [batch][classes], valid until the next call.
  std::span<const float> predict(std::span<const float> features, std::size_t batch);

  /// Training forward of `batch` samples held in rows [first_row, first_row + batch) of the
  /// reserved batch: each layer's output lands in those rows of its activation buffer, so
  /// several micro-batches of one batch can be in flight at once (a pipeline stage): what a
  /// layer keeps between forward and backward it keeps at those rows too. Returns the output.
  std::span<const float> forward_rows(std::span<const float> input, std::size_t first_row,
                                      std::size_t batch);
  /// Backward of the rows forward_rows computed: from dL/d(output) the parameter gradients
  /// overwrite gradients(), and dL/d(input) is written into `input_gradient` unless empty.
  /// `input` is what forward_rows was given for those rows.
  void backward_rows(std::span<const float> input, std::size_t first_row, std::size_t batch,
                     std::span<const float> output_gradient, std::span<float> input_gradient,
                     const gradients_ready& ready = {});

private:
  std::span<const float> forward(std::span<const float> features, std::size_t first_row,
                                 std::size_t batch, pass mode);
  /// Layer i's output for rows [first_row, first_row + batch).
  std::span<float> activation_rows(std::size_t i, std::size_t first_row, std::size_t batch);

  shape input_;
  std::size_t classes_;
  std::vector<std::unique_ptr<layer>> layers_;
  std::vector<layer_slice> slices_;
  std::vector<float_range> regularized_;
  std::vector<float> parameters_;
  std::vector<float> gradients_;
  std::vector<float> state_;
  std::size_t max_batch_ = 0;
  std::vector<std::vector<float>> activations_;  // output of each layer
  std::vector<float> delta_a_;                   // ping-pong buffers for dL/d(activation)
  std::vector<float> delta_b_;
};

} // namespace strom::compute
