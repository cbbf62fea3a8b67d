#pragma once
// L2 regularisation (weight decay in its gradient form): adds coefficient * w to the gradient
// of each regularised weight, before the updater runs. Biases are left out by the ranges
// the layers report (layer::regularized_range).

#include <span>

#include "strom/compute/layer.hpp"

namespace strom::compute {

/// gradients[i] += coefficient * parameters[i] for every i inside one of `ranges`, which are
/// absolute offsets into both buffers. Throws std::invalid_argument if the buffers differ in
/// size or a range is reversed or reaches past them.
void add_l2(std::span<const float> parameters, std::span<float> gradients,
            std::span<const float_range> ranges, float coefficient);

} // namespace strom::compute
