#pragma once
// A model's flat parameter buffer cut into its tensors (each layer's weights, then its biases
// and other parameters), the units the calibrated sharing sets a threshold for: a layer's
// weights and biases take updates of different sizes.

#include <cstdint>
#include <vector>

#include "strom/compute/encoders/calibrated_blocks.hpp"
#include "strom/compute/model.hpp"

namespace strom::compute {

/// One tensor of a model's parameters.
struct model_tensor {
  parameter_block block;    ///< where it lies in the flat buffer
  std::uint32_t layer = 0;  ///< index of its layer in model::layers()
  bool weights = false;     ///< the layer's weights (L2-regularised), else its other parameters
};

/// The tensors of `net` in buffer order; layers without parameters have none.
std::vector<model_tensor> model_tensors(const model& net);

/// Just the blocks of model_tensors(net), for threshold_encoder_options::blocks.
std::vector<parameter_block> parameter_blocks(const model& net);

} // namespace strom::compute
