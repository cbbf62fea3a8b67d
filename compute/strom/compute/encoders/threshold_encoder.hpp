#pragma once
// The stateful threshold encoder of one flat buffer: it owns the residual and either
// calibrates a threshold per tensor from the residual itself (calibrated_blocks.hpp, strom's
// default) or, as Deeplearning4j's EncodingHandler, asks the policy for one threshold,
// chooses sparse or bitmap encoding, clips the residual and sends the occasional shake-up.
// Nothing is lost, only delayed: what was added in equals what was sent plus the residual
// plus what clipping discarded.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "strom/compute/encoders/calibrated_blocks.hpp"
#include "strom/compute/codecs/encoded_update.hpp"
#include "strom/compute/codecs/threshold_codec.hpp"
#include "strom/compute/encoders/threshold_policy.hpp"

namespace strom::compute {

/// How a threshold_encoder behaves.
struct threshold_encoder_options {
  /// DL4J ResidualClippingPostProcessor defaults: clip to 5x the threshold every 5 iterations.
  static constexpr float default_clip_factor = 5.0f;
  static constexpr std::size_t default_clip_every = 5;
  /// Bitmap mode ends once a sparse message would carry fewer than (N/16) / 5 values
  /// (DL4J EncodingHandler), so that a density near N/16 does not flip every iteration.
  static constexpr std::size_t default_switch_back_divisor = 5;
  /// A shake-up sends at a third of the threshold (DL4J EncodingHandler shake-up).
  static constexpr float default_shake_up_divisor = 3.0f;

  threshold_policy policy{adaptive_threshold_options{}};  ///< picks each threshold
  float clip_factor = default_clip_factor;      ///< residual bound, in thresholds
  std::size_t clip_every = default_clip_every;  ///< clip every this many iterations; 0: never
  std::size_t switch_back_divisor = default_switch_back_divisor;  ///< bitmap hysteresis
  std::size_t shake_up_every = 0;  ///< bitmap at threshold / shake_up_divisor every k; 0: never
  float shake_up_divisor = default_shake_up_divisor;  ///< shake-up threshold divisor
  /// When set, the calibrated encoding (calibrated_blocks.hpp) replaces the policy, the
  /// clipping, the bitmap switch and the shake-up above.
  std::optional<calibrated_threshold_options> calibration;
  /// The tensors the calibrated encoding calibrates for (empty: the whole buffer as one).
  std::vector<parameter_block> blocks;
};

/// Where an encoder stands besides its residual: what a snapshot must carry so that a copy
/// encodes the next update exactly as the original would (replica_snapshot.hpp).
struct threshold_encoder_progress {
  float threshold = 0.0f;     ///< the policy's threshold for the next encoding
  std::uint64_t iteration = 0;  ///< encode calls so far (clipping and shake-up cadence)
  encoding last_encoding = encoding::threshold;  ///< bitmap hysteresis
  double last_density = 0.0;
  double clipped = 0.0;
};

/// Threshold-encodes successive updates of one flat buffer of `elements` floats.
class threshold_encoder {
public:
  /// An encoder with a zero residual; throws std::invalid_argument on bad options.
  threshold_encoder(std::size_t elements, threshold_encoder_options options);

  // -- encoding ------------------------------------------------------------------------------

  /// Adds `scale * update` (elements() floats) into the residual and encodes what reached
  /// the threshold; nullopt when fewer than 2 values would be sent. The payload is valid
  /// until the next encode call. A scale of -1 encodes the change that applies an update
  /// meant to be subtracted. A non-empty `also` gets `scale * update` added in the same pass
  /// (threshold_scan) and loses what residual clipping removes: the replica of a worker that
  /// applies its own update at once, which then stays the others' view plus the residual.
  std::optional<encoded_update> encode(std::span<const float> update, float scale = 1.0f,
                                       std::span<float> also = {});
  /// encode with the pass that adds the update into the residual done by `scan(args)`, which
  /// keeps threshold_scan's contract for the update it computes (scale and `also` given
  /// here): for an updater that computes the update in that pass (updater::scan_step)
  /// instead of storing it first. Throws std::invalid_argument when `also` is neither empty
  /// nor elements() long.
  template <class Scan>
  std::optional<encoded_update> encode_with(Scan&& scan, float scale = 1.0f,
                                            std::span<float> also = {}) {
    const threshold_scan_args args = begin_encode(scale, also);
    return finish_encode(scan(args), args);
  }

  // -- properties ----------------------------------------------------------------------------

  /// Elements of the buffer.
  std::size_t elements() const noexcept { return residual_.size(); }
  /// What was added in but not yet sent.
  std::span<const float> residual() const noexcept { return residual_; }
  /// The threshold the next (non-shake-up) encoding uses; calibrated, the latest threshold
  /// of the largest sparse tensor.
  float threshold() const noexcept;
  /// Encode calls so far.
  std::size_t iteration() const noexcept { return iteration_; }
  /// Values sent / elements for the last encode call (including one that sent nothing).
  double last_density() const noexcept { return last_density_; }
  /// Encoding of the last message sent (threshold before the first).
  encoding last_encoding() const noexcept { return last_encoding_; }
  /// Sum of everything residual clipping removed so far (signed).
  double clipped() const noexcept { return clipped_; }
  /// What each tensor's encodings did so far: one block of the whole buffer unless the
  /// encoding is calibrated.
  std::span<const block_figures> figures() const noexcept;
  /// Counts the residual's mass into figures() where the encoding does not (the Deeplearning4j
  /// policies): one pass over it, for an occasional look.
  void measure_residual() noexcept;
  /// Whether thresholds are calibrated per tensor (calibrated_blocks.hpp).
  bool calibrated() const noexcept { return calibrated_.has_value(); }
  /// Most entries a sparse message may carry: N/16, the size of a bitmap.
  std::size_t sparse_capacity() const noexcept { return sparse_capacity_; }

  /// The counters and threshold that, with residual(), make up the encoder's state.
  threshold_encoder_progress progress() const noexcept;

  // -- restoring -----------------------------------------------------------------------------

  /// Takes over a snapshotted residual (elements() floats) and progress; throws
  /// std::invalid_argument when the residual's size differs.
  void resume(std::span<const float> residual, const threshold_encoder_progress& progress);

private:
  /// Counts the call and says what it scans against: the policy's threshold and the index
  /// workspace, or for a shake-up a fraction of the threshold and no index room.
  threshold_scan_args begin_encode(float scale, std::span<float> also);
  /// Turns what the scan found into the message: encodes, commits, adapts, clips.
  std::optional<encoded_update> finish_encode(std::size_t hits, const threshold_scan_args& scan);
  bool shake_up_due() const noexcept;
  encoded_update sparse_message(std::size_t values, float threshold);
  encoded_update bitmap_message(float threshold);
  /// Counts what a policy-driven message (or none) sent and clipping removed in figures_.
  void count_message(const std::optional<encoded_update>& message, double clipped_magnitude);

  threshold_encoder_options options_;
  std::optional<calibrated_blocks> calibrated_;
  block_figures whole_;  // the figures of a policy-driven encoder
  std::vector<float> residual_;
  std::vector<std::uint32_t> workspace_;  // ceil(N/16) words: the bitmap or N/16 indices
  std::size_t sparse_capacity_;
  std::size_t iteration_ = 0;
  double last_density_ = 0.0;
  encoding last_encoding_ = encoding::threshold;
  double clipped_ = 0.0;
};

} // namespace strom::compute
