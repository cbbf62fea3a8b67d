#pragma once
// Strom 2015 / Deeplearning4j threshold encoding: sparse signed 1-based int32 indices, each
// standing for +/- threshold. The raw kernels; threshold_encoder holds the state around them.

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute {

/// Adds `scale * update` into `residual` and records, while `indices` has room, the signed
/// 1-based index of every element whose residual reaches +/- `threshold`. Returns how many
/// elements reached it, which may exceed indices.size(). The residual keeps the full values:
/// the caller commits the sparse steps or switches to the bitmap. A non-empty `also` (as long
/// as the residual) gets `scale * update` added in the same pass: a worker that applies its
/// own update at once saves a pass over it; throws std::invalid_argument on a size mismatch.
/// Index entries past the returned count may be overwritten. Runs threshold_scan_avx512 where
/// the CPU has AVX-512F, threshold_scan_portable otherwise; both give the same results.
std::size_t threshold_scan(std::span<float> residual, std::span<const float> update,
                           float threshold, std::span<std::int32_t> indices,
                           float scale = 1.0f, std::span<float> also = {});

/// threshold_scan's arguments besides the update: for a pass that computes the update as it
/// scans (updater::scan_step), so that the update is never stored.
struct threshold_scan_args {
  std::span<float> residual;
  float threshold = 0.0f;
  std::span<std::int32_t> indices;
  float scale = 1.0f;
  std::span<float> also;
};

/// threshold_scan on the kernel every CPU runs (four lanes), whatever this one has.
std::size_t threshold_scan_portable(std::span<float> residual, std::span<const float> update,
                                    float threshold, std::span<std::int32_t> indices,
                                    float scale = 1.0f, std::span<float> also = {});

/// What residual clipping removed.
struct clip_result {
  double removed = 0.0;    ///< the sum of what was removed (signed)
  double magnitude = 0.0;  ///< the sum of its absolute values
};

/// Clamps every residual element to [-bound, bound]; says what was removed. A non-empty
/// `also` (as long as the residual) loses what was removed too: the replica that already
/// holds the residual then stays within `bound` of what the others were sent.
clip_result clip_to_bound(std::span<float> residual, float bound, std::span<float> also = {});

/// clip_to_bound over the elements of the signed 1-based `indices` (as threshold_scan records
/// them, each at most once) only.
clip_result clip_listed_to_bound(std::span<float> residual, std::span<const std::int32_t> indices,
                                 float bound, std::span<float> also = {});

/// Takes the sent steps out of the residual: -threshold at each positive index, +threshold
/// at each negative one.
void threshold_commit(std::span<float> residual, std::span<const std::int32_t> indices,
                      float threshold);

/// Adds +/- `threshold` at each index of the little-endian int32 `payload`. Preconditions
/// (checked by decode_add): every index non-zero with |index| <= target.size().
void threshold_decode_add(std::span<const std::byte> payload, float threshold,
                          std::span<float> target);

} // namespace strom::compute
