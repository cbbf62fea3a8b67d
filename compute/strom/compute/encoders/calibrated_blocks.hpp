#pragma once
// The self-calibrating encoding of a residual, tensor by tensor (strom's default sharing):
// - each large tensor's threshold is the magnitude above which the wanted density of its
//   residual lies, estimated from a sample at every encoding (magnitude_quantile.hpp), so it
//   fits the first step as well as the thousandth and a layer of tiny updates as well as one
//   of large ones;
// - each sent element carries the mean magnitude of the tensor's sent elements, not the
//   threshold, so what arrives is as large as what left the residual (Deeplearning4j's
//   +-threshold delivered a fraction of Adam's steps, and its residual clipping threw the
//   rest away);
// - a tensor small enough that a sparse message saves little goes dense in fp16, its rounding
//   kept in the residual, and so does a step in which more than a sixteenth of a tensor
//   reaches its threshold (ties: a tensor of equal values).
// Nothing is clipped: an element's residual is bounded by the threshold of the share it
// belongs to, which the estimate keeps tracking.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "strom/compute/codecs/encoded_update.hpp"

namespace strom::compute {

/// How the calibrated encoding behaves.
struct calibrated_threshold_options {
  /// Share of a large tensor's elements sent per step. Measured on bench/sharing_jobs with
  /// bench_sharing (see its README).
  static constexpr double default_density = 0.01;
  /// Tensors of at most this many elements go dense (fp16): 32 KiB a step, which a link
  /// carries in the time of its latency.
  static constexpr std::size_t default_dense_elements = 16384;

  double density = default_density;                   ///< in (0, 1/16]
  std::size_t dense_elements = default_dense_elements; ///< tensors this small go dense
};

/// One tensor of the flat buffer: the unit a threshold is calibrated for.
struct parameter_block {
  std::size_t offset = 0;  ///< first element
  std::size_t count = 0;   ///< elements
};

/// What one block's encodings did so far.
struct block_figures {
  std::size_t offset = 0;
  std::size_t count = 0;
  encoding last_encoding = encoding::threshold;  ///< of the latest encoding (dense_fp16 too)
  float threshold = 0.0f;   ///< the latest selection threshold (0 when dense)
  float scale = 0.0f;       ///< the latest magnitude of each sent step (0 when dense)
  std::uint64_t encodes = 0;      ///< encodings of this block
  std::uint64_t values_sent = 0;  ///< elements sent over all of them
  double sent_mass = 0.0;     ///< sum of |value| sent
  double clipped_mass = 0.0;  ///< sum of |value| residual clipping removed
  /// Sum of |residual| after the latest encoding: what the others have not been sent yet
  /// (0 where not measured: the Deeplearning4j policies make no pass that could count it).
  double residual_mass = 0.0;
};

/// Encodes a residual block by block into one `blocks` payload (block_codec.hpp).
class calibrated_blocks {
public:
  /// Blocks over a buffer of `elements` floats: `blocks` in increasing, non-overlapping order
  /// within it (empty: one block of the whole buffer). Throws std::invalid_argument on blocks
  /// outside the buffer or out of order, and on options out of range.
  calibrated_blocks(std::size_t elements, std::vector<parameter_block> blocks,
                    calibrated_threshold_options options);

  /// Encodes what `residual` (elements() floats, the update already added in) holds and takes
  /// what it sends out of it; nullopt when nothing is sent. `iteration` moves the sample. The
  /// payload is valid until the next call.
  std::optional<encoded_update> encode(std::span<float> residual, std::uint64_t iteration);

  /// Each block's figures, in buffer order.
  std::span<const block_figures> figures() const noexcept { return figures_; }
  /// The selection threshold of the largest sparse block (what a single number can say);
  /// the smallest normal float before any, or when every block is dense.
  float threshold() const noexcept;
  /// Elements sent by the latest encode call.
  std::size_t last_values() const noexcept { return last_values_; }
  /// Elements of the buffer.
  std::size_t elements() const noexcept { return elements_; }

private:
  /// Writes block `b` (its residual `r`) at the end of the payload; returns values sent.
  std::size_t encode_block(std::size_t b, std::span<float> r, std::uint64_t iteration);
  std::size_t encode_sparse(block_figures& figures, std::span<float> r, float threshold);
  std::size_t encode_dense(block_figures& figures, std::span<float> r);

  std::size_t elements_;
  calibrated_threshold_options options_;
  std::vector<block_figures> figures_;
  std::vector<std::uint32_t> headers_;  // block count, then five words a block sent
  std::vector<std::uint32_t> words_;    // the payload: headers_, then the blocks' payloads
  std::size_t body_words_ = 0;          // payload words written after the headers so far
  std::vector<float> sample_;
  std::size_t last_values_ = 0;
};

} // namespace strom::compute
