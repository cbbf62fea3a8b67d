#pragma once
// A layer on the GPU: the same function, configuration and parameter layout as its host
// layer (compute/layer.hpp), over device pointers. The device model hands each layer its
// slices of its flat device buffers, exactly as the host model does, so parameters,
// gradients and state copy between host and device as three flat blocks.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/device/engine_spec.hpp"
#include "strom/compute/layer.hpp"

namespace strom::compute::cuda {

class device_layer {
public:
  virtual ~device_layer() = default;

  /// Points the layer at its slices of the device model's flat buffers.
  virtual void bind(float* parameters, float* gradients, float* state) {}
  /// Sizes device workspaces for batches of up to max_batch samples (allocation happens here,
  /// never inside a step).
  virtual void reserve(std::size_t max_batch) {}
  /// output[batch][out] = f(input[batch][in]) on ctx's stream.
  virtual void forward(const float* input, float* output, std::size_t batch, pass mode,
                       cuda_context& ctx) = 0;
  /// From dL/d(output): overwrites this layer's parameter gradients and, when input_gradient
  /// is not null, writes dL/d(input). `input` and `output` are those of the last training
  /// forward pass.
  virtual void backward(const float* input, const float* output, const float* output_gradient,
                        float* input_gradient, std::size_t batch, cuda_context& ctx) = 0;
};

/// The device layer `spec` describes (device_layer_spec_of reads one off a host layer).
std::unique_ptr<device_layer> make_device_layer(const device_layer_spec& spec);

/// The batch's mean softmax cross-entropy of logits [batch][classes] against labels, written
/// to the device float `loss`; dL/d(logits) = (softmax - onehot) / batch into
/// `logits_gradient` unless it is null. Labels outside [0, classes) count as no class.
void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t batch,
                           std::size_t classes, float* logits_gradient, float* loss,
                           cuda_context& ctx);

} // namespace strom::compute::cuda
