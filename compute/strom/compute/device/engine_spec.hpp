#pragma once
// What the CUDA backend builds an engine from: the model's layers and updater as plain values,
// read off the host objects here. The backend is a module loaded on demand
// (device/cuda_module.cpp), so it sees descriptions, never the host classes themselves.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strom/compute/layers/activation.hpp"
#include "strom/compute/model.hpp"
#include "strom/compute/updaters/ada_grad.hpp"
#include "strom/compute/updaters/adam.hpp"
#include "strom/compute/updaters/momentum.hpp"
#include "strom/compute/updaters/rms_prop.hpp"

namespace strom::compute {

/// One layer: its kind and the configuration that kind reads.
struct device_layer_spec {
  enum class kind : std::uint8_t {
    dense, activation, convolution, pooling, batch_normalization, dropout
  };
  kind what = kind::dense;
  shape input{};                ///< one sample's input
  std::size_t units = 0;        ///< dense: outputs; convolution: filters
  activation_kind function = activation_kind::relu;
  float alpha = 0.0f;           ///< leaky_relu's negative slope
  std::size_t kernel = 1;       ///< convolution, pooling
  std::size_t stride = 1;
  std::size_t padding = 0;
  bool max = true;              ///< pooling: max, else average
  float momentum = 0.0f;        ///< batch normalisation
  float epsilon = 0.0f;
  float rate = 0.0f;            ///< dropout
  std::uint64_t seed = 0;       ///< dropout's masks
};

/// The updater: its rule and that rule's options.
struct device_updater_spec {
  enum class kind : std::uint8_t { sgd, momentum, nesterov, adam, ada_grad, rms_prop };
  kind what = kind::sgd;
  momentum_options momentum{};  ///< momentum, nesterov
  adam_options adam{};
  ada_grad_options ada_grad{};
  rms_prop_options rms_prop{};
};

/// A whole replica's step: layers, the flat layout, the updater and the batch.
struct engine_spec {
  std::vector<device_layer_spec> layers;
  std::vector<std::size_t> output_sizes;  ///< floats of one sample's output, by layer
  std::vector<layer_slice> slices;
  std::vector<float_range> regularized;
  std::size_t parameters = 0;
  std::size_t state = 0;
  std::size_t updater_state = 0;
  device_updater_spec updater{};
  float l2 = 0.0f;
  std::size_t inputs = 0;
  std::size_t classes = 0;
  std::size_t max_batch = 0;
};

/// `host` as the CUDA backend builds it; `seed` seeds a dropout layer's masks. Throws
/// std::invalid_argument naming a kind the CUDA backend has no version of.
device_layer_spec device_layer_spec_of(const layer& host, std::uint64_t seed);
/// `host` as the CUDA backend builds it; throws std::invalid_argument for an unknown updater.
device_updater_spec device_updater_spec_of(const updater& host);
/// The engine for `net` (reserved for its batch), `rule` and L2 factor `l2`; `seed` seeds
/// the dropout masks (a stream a layer).
engine_spec engine_spec_of(const model& net, const updater& rule, float l2, std::uint64_t seed);

} // namespace strom::compute
