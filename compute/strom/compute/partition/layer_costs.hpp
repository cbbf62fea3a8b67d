#pragma once
// What each layer of a chain costs, the input of the model-parallel partitioner
// (stage_partition.hpp): compute time per sample, the activation it hands the next layer, and
// the memory it keeps resident. A plain struct so that costs can come from profiling
// (layer_profile.hpp), from a simulation's calibration, or be written by hand in tests.

#include <cstdint>
#include <string>
#include <vector>

namespace strom::compute {

/// One layer's costs.
struct layer_cost {
  std::string kind;                              ///< layer kind ("dense", ...) for reports
  double seconds_per_sample = 0;                 ///< forward + backward, at speed 1.0
  std::uint64_t activation_bytes_per_sample = 0;  ///< this layer's output for one sample
  std::uint64_t parameter_bytes = 0;             ///< trainable parameter values
  std::uint64_t gradient_bytes = 0;              ///< one gradient per parameter
  std::uint64_t model_state_bytes = 0;           ///< non-trainable state (batch-norm statistics)
  std::uint64_t updater_state_bytes = 0;         ///< the job's updater's state for the parameters

  /// Bytes the layer keeps whatever the batch: parameters, gradients, state, updater state.
  std::uint64_t resident_bytes() const noexcept;
};

/// The costs of a chain of layers, first to last.
struct layer_costs {
  std::uint64_t input_bytes_per_sample = 0;  ///< one input sample, fed to the first layer
  std::vector<layer_cost> layers;            ///< first to last
};

} // namespace strom::compute
