#pragma once
// Encoder options for codec tests: one fixed threshold and no residual clipping, so that
// every value a test puts in stays in the residual until it is sent.

#include "strom/compute/encoders/threshold_encoder.hpp"

namespace strom::testing {

inline compute::threshold_encoder_options fixed_unclipped(float threshold) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy(compute::fixed_threshold_options{threshold});
  options.clip_every = 0;
  return options;
}

} // namespace strom::testing
