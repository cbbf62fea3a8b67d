#pragma once
// Threshold encoding on the GPU (Deeplearning4j encodes on the device and sends only the
// encoded message): the residual stays in device memory and only the signed 1-based indices
// cross to the host. Same results as the host threshold_scan (codecs/threshold_codec.hpp),
// indices in ascending order.

#include <cstddef>
#include <cstdint>

#include "strom/compute/cuda/cuda_context.hpp"
#include "strom/compute/cuda/device_buffer.hpp"
#include "strom/compute/cuda/pinned_buffer.hpp"

namespace strom::compute::cuda {

/// Device scratch for threshold_scan over up to `elements` floats, reused between scans.
class threshold_scan_workspace {
public:
  explicit threshold_scan_workspace(std::size_t elements);

  /// The most elements one scan with this workspace may cover.
  std::size_t elements() const noexcept { return elements_; }

  // -- implementation detail (codecs/threshold_scan.cu) ------------------------------------

  /// One bit per element, set where the residual reached the threshold.
  device_buffer<std::uint32_t> hit_masks;
  /// Hits per tile, then a zero, so that the last offset is the total.
  device_buffer<std::uint32_t> block_counts;
  /// Exclusive prefix sums of block_counts: where each tile's indices start.
  device_buffer<std::uint32_t> block_offsets;
  /// cub's scratch for the scan over block_counts.
  device_buffer<std::byte> scan_storage;
  /// Pinned host word the total is copied into (a pageable copy costs a staging pass).
  pinned_buffer<std::uint32_t> host_total;

private:
  std::size_t elements_ = 0;
};

/// residual[n] += scale * update[n] (and also[n] += scale * update[n] unless also is null);
/// every element whose residual reaches +/- threshold is recorded, in ascending order, as its
/// signed 1-based index into device `indices` while `capacity` allows. Returns how many
/// reached it (which may exceed capacity). The residual keeps the full values, as on the host.
/// Waits for ctx's stream, since the count is read on the host. Throws std::invalid_argument
/// when n exceeds workspace.elements().
std::size_t threshold_scan(float* residual, const float* update, std::size_t n, float threshold,
                           std::int32_t* indices, std::size_t capacity, float scale, float* also,
                           threshold_scan_workspace& workspace, cuda_context& ctx);

/// The host threshold_commit on the device: -threshold at each positive index, +threshold at
/// each negative one, for the first `count` device indices.
void threshold_commit(float* residual, const std::int32_t* indices, std::size_t count,
                      float threshold, cuda_context& ctx);

} // namespace strom::compute::cuda
