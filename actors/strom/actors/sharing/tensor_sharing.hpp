#pragma once
// What threshold sharing did to each tensor of the model over a run (metrics
// `sharing_layers`, Prometheus strom_node_sharing_*): a node's framer adds up its workers'
// encoders, the job_master its nodes'. Users of Deeplearning4j asked for exactly this history
// of threshold and sparsity (deeplearning4j#5931) to see whether sharing keeps up.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "strom/compute/encoders/calibrated_blocks.hpp"
#include "strom/compute/parameter_blocks.hpp"

namespace strom::actors {

/// One tensor's sharing so far, summed over the encoders that share it.
struct tensor_sharing {
  std::int32_t layer = -1;    ///< its layer's index; -1: the whole model under one threshold
  std::string tensor = "all";  ///< "weights", "biases" (any other parameters) or "all"
  std::uint64_t elements = 0;
  std::uint8_t encoding = 0;  ///< compute::encoding of its latest message
  float threshold = 0.0f;     ///< mean over the encoders of their latest threshold (0: dense)
  float scale = 0.0f;         ///< mean over the encoders of their latest step magnitude
  std::uint64_t encodes = 0;      ///< encodings, over all encoders
  std::uint64_t values_sent = 0;  ///< elements sent, over all encoders
  double sent_mass = 0.0;     ///< sum of |value| sent
  double clipped_mass = 0.0;  ///< sum of |value| residual clipping removed
  double residual_mass = 0.0; ///< sum of |residual| now, over the encoders
  std::uint32_t encoders = 0; ///< encoders added in (for the means)
};

/// Elements sent per element per encoding.
double density(const tensor_sharing& x) noexcept;
/// Share of the update mass that residual clipping removed instead of sending.
double clipped_fraction(const tensor_sharing& x) noexcept;

/// One encoder's figures as tensors: each block named after the model tensor at its offset,
/// "all" for a block that is none of them (the whole model under one threshold).
void describe_tensors(std::span<const compute::block_figures> figures,
                      std::span<const compute::model_tensor> tensors,
                      std::vector<tensor_sharing>& out);

/// How many steps of updates the residuals hold: their mass over the mass sent per encoding,
/// summed over the tensors whose residual is measured; 0 when none is.
double lag_steps(const std::vector<tensor_sharing>& tensors) noexcept;

/// Adds `from` (another encoder's or node's tensors) into `into`: counts summed, thresholds
/// and scales averaged. Lists of another shape replace nothing and are dropped.
void add_tensors(std::vector<tensor_sharing>& into, const std::vector<tensor_sharing>& from);

template <class F>
typename F::result_type inspect(F& f, tensor_sharing& x) {
  return f(caf::meta::type_name("tensor_sharing"), x.layer, x.tensor, x.elements, x.encoding,
           x.threshold, x.scale, x.encodes, x.values_sent, x.sent_mass, x.clipped_mass,
           x.residual_mass, x.encoders);
}

} // namespace strom::actors
