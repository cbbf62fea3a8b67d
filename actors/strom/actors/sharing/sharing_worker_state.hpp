#pragma once
// A gradient-sharing worker's part of the trainer (trainer_sharing.cpp): its encoder's
// figures by tensor, which the node's framer reports (tensor_sharing.hpp). Its residual is in
// the trainer's encoder, which every mode keeps for the threshold of its frames.

#include <vector>

#include "strom/actors/sharing/tensor_sharing.hpp"
#include "strom/compute/parameter_blocks.hpp"

namespace strom::actors {

/// What a sharing trainer keeps.
struct sharing_worker_state {
  std::vector<compute::model_tensor> tensors;  ///< the model's, to group the figures by
  std::vector<tensor_sharing> tensor_figures;  ///< its encoder's figures by tensor
  bool drift_warned = false;  ///< the log said the replicas drift apart
};

} // namespace strom::actors
