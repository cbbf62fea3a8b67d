#pragma once
// A small real model (dense, batch normalization, output) trained with Adam under gradient
// sharing the way a trainer trains (compute_gradients, then the updater inside the threshold
// encoder's pass, applied to the replica in the same pass): what the snapshot tests take
// snapshots of.

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "strom/compute/encoders/threshold_encoder.hpp"
#include "strom/compute/replica.hpp"
#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

namespace strom::testing {

/// Features per sample and samples per batch of the small model.
inline constexpr std::size_t small_features = 6;
inline constexpr std::size_t small_batch = 4;

/// The job text of the small model.
inline const char* small_sharing_job =
  "(network = (input = (width = 6), layers = [(dense = (units = 8)), (batchNormalization = ()), "
  "(output = (units = 3))]), training = (batchSize = 4, updater = (learningRate = 0.01, "
  "adam = ())))";

inline std::unique_ptr<compute::replica> small_replica() {
  const auto job = runtime::parse_job_text(small_sharing_job, "small.job", ".");
  BOOST_REQUIRE_MESSAGE(job, (job ? "" : job.err().message));
  auto built = compute::make_replica(job->reader(), 0);
  BOOST_REQUIRE_MESSAGE(built, (built ? "" : built.err().message));
  return std::move(*built);
}

/// An encoder for `r` with the adaptive threshold policy, so that the threshold, the residual
/// and the encoder's counters all move from step to step.
inline compute::threshold_encoder small_encoder(const compute::replica& r,
                                                bool calibrated = false) {
  compute::threshold_encoder_options options;
  options.policy = compute::threshold_policy{compute::adaptive_threshold_options{}};
  if (calibrated)  // strom's default: the model's tensors, one sparse (dense_elements 8)
    options.calibration = compute::calibrated_threshold_options{.dense_elements = 8};
  return compute::threshold_encoder{r.net().parameters().size(), options};
}

/// One trainer-style step on batch `step` of a fixed synthetic set.
inline void sharing_step(compute::replica& r, compute::threshold_encoder& encoder,
                         std::size_t step) {
  std::vector<float> features(small_features * small_batch);
  std::vector<std::int32_t> labels(small_batch);
  for (std::size_t i = 0; i < features.size(); ++i)
    features[i] = static_cast<float>((i * 7 + step * 3) % 11) * 0.1f - 0.5f;
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = static_cast<std::int32_t>((i + step) % 3);
  r.compute_gradients(features, labels, small_batch);
  encoder.encode_with(
    [&r](const compute::threshold_scan_args& scan) { return r.scan_update(scan); }, -1.0f,
    r.net().parameters());
}

} // namespace strom::testing
