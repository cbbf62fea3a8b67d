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

  /// output[batch * out] = f(input[batch * in]).
  virtual void forward(std::span<const float> input, std::span<float> output, std::size_t batch,
                       pass mode) = 0;
  /// From dL/d(output), overwrites this layer's parameter gradients and, when input_gradient
  /// is not empty, writes dL/d(input). `input` and `output` are those of the last training
  /// forward pass.
  virtual void backward(std::span<const float> input, std::span<const float> output,
                        std::span<const float> output_gradient, std::span<float> input_gradient,
                        std::size_t batch) = 0;
};

} // namespace strom::compute
