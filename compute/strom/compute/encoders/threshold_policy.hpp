#pragma once
// How the threshold of the sparse encodings moves from one iteration to the next, after
// Deeplearning4j's ThresholdAlgorithm family (org.deeplearning4j.optimize.solvers.
// accumulation.encoding.threshold): fixed, adaptive and target-sparsity.

#include <cmath>
#include <variant>

namespace strom::compute {

/// DL4J's default decay rate, 0.5^(1/20): the threshold halves (or doubles) in 20 steps.
inline const double dl4j_default_decay_rate = std::pow(0.5, 1.0 / 20.0);

/// A threshold that never changes (DL4J FixedThresholdAlgorithm).
struct fixed_threshold_options {
  /// DL4J SharedTrainingMaster's default encoding threshold.
  static constexpr float default_threshold = 1e-3f;
  float threshold = default_threshold;  ///< the threshold of every encoding
};

/// A threshold that keeps the sparsity inside a band (DL4J AdaptiveThresholdAlgorithm).
struct adaptive_threshold_options {
  static constexpr float default_initial_threshold = 1e-4f;  ///< DL4J AdaptiveThresholdAlgorithm.DEFAULT_INITIAL_THRESHOLD
  static constexpr double default_min_sparsity = 1e-4;       ///< DL4J DEFAULT_MIN_SPARSITY_TARGET
  static constexpr double default_max_sparsity = 1e-2;       ///< DL4J DEFAULT_MAX_SPARSITY_TARGET
  float initial_threshold = default_initial_threshold;  ///< threshold of the first encoding
  double min_sparsity = default_min_sparsity;  ///< below this fraction sent, the threshold shrinks
  double max_sparsity = default_max_sparsity;  ///< above this fraction sent, the threshold grows
  double decay_rate = dl4j_default_decay_rate; ///< factor per step, in (0, 1)
};

/// A threshold steered towards one sparsity (DL4J TargetSparsityThresholdAlgorithm).
struct target_sparsity_options {
  static constexpr float default_initial_threshold = 1e-4f;  ///< DL4J DEFAULT_INITIAL_THRESHOLD
  static constexpr double default_sparsity_target = 1e-3;    ///< DL4J DEFAULT_SPARSITY_TARGET
  float initial_threshold = default_initial_threshold;  ///< threshold of the first encoding
  double sparsity_target = default_sparsity_target;     ///< fraction of elements to send
  double decay_rate = dl4j_default_decay_rate;          ///< factor per step, in (0, 1)
};

/// The threshold of the next encoding, updated from the sparsity each encoding achieved.
class threshold_policy {
public:
  /// A policy over `options`; throws std::invalid_argument on a non-positive threshold,
  /// a decay rate outside (0, 1) or an empty sparsity band.
  threshold_policy(fixed_threshold_options options);
  threshold_policy(adaptive_threshold_options options);
  threshold_policy(target_sparsity_options options);

  /// The threshold the next encoding uses.
  float threshold() const noexcept { return threshold_; }

  /// Takes in the sparsity (values sent / elements) of the encoding that used threshold().
  void observe(double sparsity) noexcept;

  /// Continues from `threshold`, where a snapshotted policy stood (replica_snapshot.hpp).
  void resume_at(float threshold) noexcept { threshold_ = threshold; }

private:
  std::variant<fixed_threshold_options, adaptive_threshold_options, target_sparsity_options>
    options_;
  float threshold_;
};

} // namespace strom::compute
