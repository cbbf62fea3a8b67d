#pragma once
// Initial weight distributions, scaled by fan-in and fan-out so that activations and
// gradients keep their variance through the layers at the start of training.

#include <cstddef>
#include <span>

#include "strom/compute/random.hpp"

namespace strom::compute {

/// How a layer's weights are drawn.
enum class weight_init {
  xavier,          ///< normal, stddev sqrt(2 / (fan_in + fan_out)) (Glorot and Bengio, 2010)
  xavier_uniform,  ///< uniform in +-sqrt(6 / (fan_in + fan_out))
  he,              ///< normal, stddev sqrt(2 / fan_in) (He et al., 2015)
  he_uniform,      ///< uniform in +-sqrt(6 / fan_in)
};

/// Fills `weights` with draws from `init` for a layer with the given fans.
void fill_weights(std::span<float> weights, weight_init init, std::size_t fan_in,
                  std::size_t fan_out, rng& gen);

} // namespace strom::compute
