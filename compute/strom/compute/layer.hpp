#pragma once
// The layer contract. A model owns three flat float buffers (parameters, gradients,
// non-trainable state) and hands each layer its slices: codecs, averaging, sharding and
// snapshots then work on one contiguous range, never on per-layer objects.

#include <cstddef>
#include <span>
#include <string>

#include "strom/compute/random.hpp"
#include "strom/compute/shape.hpp"

namespace strom::compute {

/// Whether a forward pass trains (dropout active, batch statistics) or infers.
enum class pass { training, inference };

/// A range [begin, end) of floats inside a layer's parameter slice.
struct float_range {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// The samples a forward or backward pass computes: rows [first, first + count) of the batch
/// the model reserved. A whole batch starts at row 0. A pipeline stage keeps several
/// micro-batches of one minibatch in flight in other rows of the same batch, so a layer that
/// keeps something per sample between forward and backward (a dropout mask, pooling winners,
/// batch statistics) keeps it at those rows, not from row 0.
struct batch_rows {
  std::size_t first = 0;
  std::size_t count = 0;

  /// A whole batch of `count` samples (implicit: most callers have no other rows).
  constexpr batch_rows(std::size_t count) noexcept : count(count) {}
  constexpr batch_rows(std::size_t first, std::size_t count) noexcept
    : first(first), count(count) {}
};

/// One layer of a feed-forward network, operating on a batch at a time.
class layer {
public:
  virtual ~layer() = default;

  // -- description -----------------------------------------------------------------------

  /// Short kind name ("dense", "convolution", ...) for summaries and errors.
  virtual std::string kind() const = 0;
  /// Shape of one sample's output.
  virtual shape output_shape() const = 0;
  /// Trainable floats this layer owns in the model's parameter buffer.
  virtual std::size_t parameter_count() const { return 0; }
  /// Non-trainable floats (e.g. batch-norm running statistics) in the state buffer.
  virtual std::size_t state_count() const { return 0; }
  /// The part of the parameter slice that L2 regularisation applies to (weights, not biases).
  virtual float_range regularized_range() const { return {}; }

  // -- set-up (never inside a training step) -----------------------------------------------

  /// Writes initial values into this layer's parameter and state slices.
  virtual void initialize(std::span<float> parameters, std::span<float> state, rng& gen) const {}
  /// Points the layer at its slices of the model's flat buffers; called again when they move.
  virtual void bind(std::span<float> parameters, std::span<float> gradients, std::span<float> state) {}
  /// Sizes internal workspaces for batches of up to max_batch samples.
  virtual void reserve(std::size_t max_batch) {}
  /// Bytes reserve(max_batch) allocates inside the layer, so that a job's memory can be
  /// estimated before anything is allocated (compute/memory_estimate.hpp).
  virtual std::size_t workspace_bytes(std::size_t max_batch) const { return 0; }

  // -- the step (no allocation after reserve) ----------------------------------------------

  /// output[rows.count * out] = f(input[rows.count * in]); `input` and `output` hold only
  /// those rows.
  virtual void forward(std::span<const float> input, std::span<float> output, batch_rows rows,
                       pass mode) = 0;
  /// From dL/d(output), overwrites this layer's parameter gradients and, when input_gradient
  /// is not empty, writes dL/d(input). `input` and `output` are those of the last training
  /// forward pass of the same rows.
  virtual void backward(std::span<const float> input, std::span<const float> output,
                        std::span<const float> output_gradient, std::span<float> input_gradient,
                        batch_rows rows) = 0;
};

} // namespace strom::compute
