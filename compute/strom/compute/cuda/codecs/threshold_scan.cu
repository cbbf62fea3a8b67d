// threshold_scan as an ordered stream compaction in two passes over tiles of 4096 elements.
// The first pass is the memory-bound one: it adds the update into the residual (and `also`)
// with 16-byte loads, and leaves one hit bit per element and a hit count per tile. cub scans
// the tile counts into offsets. The second pass reads only the hit bits (1/32 of the
// residual's bytes) and, for each listed hit, the residual's sign, and writes the signed
// indices at their tile's offset in ascending order. So the residual is read once, not
// twice: pass one moves 12 bytes an element (16 with `also`), the bits add a quarter byte.
// Measured on an H200 (bench_cuda_encode, random-normal update, 12 bytes an element against
// a device-to-device copy's 8): 0.86 of the copy's rate at 2^26 elements and density 1e-3,
// 0.82 at 1e-2; 0.79 and 0.74 at 2^24, where the launches and the count's trip to the host
// weigh more.

#include "strom/compute/cuda/threshold_scan.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

/// Threads of a first-pass block, and the float4s each handles: 16 elements a thread keeps
/// eight to twelve 16-byte loads in flight, enough to cover the memory latency.
constexpr unsigned tile_threads = 256;
constexpr unsigned quads_per_thread = 4;
constexpr unsigned floats_per_quad = 4;
constexpr std::size_t tile_elements =
  std::size_t{tile_threads} * quads_per_thread * floats_per_quad;
constexpr unsigned bits_per_word = 32;
/// Hit-mask words of one tile; also the threads of a second-pass block (one word each).
constexpr unsigned tile_words = tile_elements / bits_per_word;
constexpr unsigned full_warp = 0xffffffffu;

std::size_t tiles_for(std::size_t elements) {
  return (elements + tile_elements - 1) / tile_elements;
}

bool quad_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % sizeof(float4) == 0;
}

__device__ inline unsigned reached(float value, float threshold) {
  return fabsf(value) >= threshold ? 1u : 0u;
}

/// residual[i] += change and also[i] += change, change = scale * update[i], rounded after the
/// product and after each sum as the host rounds (no FMA); returns whether the new residual
/// reached the threshold.
template <bool Also>
__device__ inline unsigned add_element(float& residual, float update, float* also_element,
                                       float scale, float threshold) {
  const float change = __fmul_rn(scale, update);
  residual = __fadd_rn(residual, change);
  if constexpr (Also)
    *also_element = __fadd_rn(*also_element, change);
  return reached(residual, threshold);
}

/// First pass: one tile a block. Thread t handles quads t, t + 256, t + 512 and t + 768 of
/// its tile (so that a warp's loads are contiguous) and the hit bits of quad q land in
/// bits 4 (q % 8) .. 4 (q % 8) + 3 of mask word q / 8 of the tile: word w holds elements
/// 32 w .. 32 w + 31 of the tile, lowest element in the lowest bit. `Vector`: all three
/// pointers are 16-byte aligned, so whole tiles load as float4.
template <bool Vector, bool Also>
__global__ __launch_bounds__(tile_threads) void mark_hits(
  float* __restrict__ residual, const float* __restrict__ update, float* __restrict__ also,
  std::size_t n, float threshold, float scale, std::uint32_t* __restrict__ hit_masks,
  std::uint32_t* __restrict__ block_counts) {
  using block_reduce = cub::BlockReduce<unsigned, tile_threads>;
  __shared__ typename block_reduce::TempStorage reduce_storage;

  const std::size_t tile_begin = std::size_t{blockIdx.x} * tile_elements;
  const unsigned lane = threadIdx.x % 32;
  unsigned nibbles[quads_per_thread];

  if (Vector && tile_begin + tile_elements <= n) {
    // All loads first, so that they are in flight together.
    float4 r[quads_per_thread];
    float4 u[quads_per_thread];
    float4 a[quads_per_thread];
    auto* r4 = reinterpret_cast<float4*>(residual + tile_begin);
    const auto* u4 = reinterpret_cast<const float4*>(update + tile_begin);
    auto* a4 = reinterpret_cast<float4*>(also + (Also ? tile_begin : 0));
#pragma unroll
    for (unsigned k = 0; k < quads_per_thread; ++k) {
      const unsigned quad = k * tile_threads + threadIdx.x;
      r[k] = r4[quad];
      u[k] = u4[quad];
      if constexpr (Also)
        a[k] = a4[quad];
    }
#pragma unroll
    for (unsigned k = 0; k < quads_per_thread; ++k) {
      const unsigned quad = k * tile_threads + threadIdx.x;
      nibbles[k] = add_element<Also>(r[k].x, u[k].x, &a[k].x, scale, threshold) |
                   add_element<Also>(r[k].y, u[k].y, &a[k].y, scale, threshold) << 1 |
                   add_element<Also>(r[k].z, u[k].z, &a[k].z, scale, threshold) << 2 |
                   add_element<Also>(r[k].w, u[k].w, &a[k].w, scale, threshold) << 3;
      r4[quad] = r[k];
      if constexpr (Also)
        a4[quad] = a[k];
    }
  } else {
    // The last, partial tile, or pointers that are not 16-byte aligned: element by element.
#pragma unroll
    for (unsigned k = 0; k < quads_per_thread; ++k) {
      const std::size_t first =
        tile_begin + std::size_t{k * tile_threads + threadIdx.x} * floats_per_quad;
      unsigned nibble = 0;
      for (unsigned j = 0; j < floats_per_quad; ++j) {
        const std::size_t i = first + j;
        if (i < n) {
          float r = residual[i];
          nibble |= add_element<Also>(r, update[i], also + (Also ? i : 0), scale, threshold) << j;
          residual[i] = r;
        }
      }
      nibbles[k] = nibble;
    }
  }

  unsigned hits = 0;
#pragma unroll
  for (unsigned k = 0; k < quads_per_thread; ++k) {
    hits += __popc(nibbles[k]);
    // Lanes 8 w .. 8 w + 7 of a warp hold the 32 elements of one mask word, four each.
    unsigned word = nibbles[k] << (floats_per_quad * (lane % 8));
    word |= __shfl_xor_sync(full_warp, word, 1);
    word |= __shfl_xor_sync(full_warp, word, 2);
    word |= __shfl_xor_sync(full_warp, word, 4);
    const unsigned quad = k * tile_threads + threadIdx.x;
    if (lane % 8 == 0)
      hit_masks[std::size_t{blockIdx.x} * tile_words + quad / 8] = word;
  }
  const unsigned tile_hits = block_reduce(reduce_storage).Sum(hits);
  if (threadIdx.x == 0) {
    block_counts[blockIdx.x] = tile_hits;
    // The zero after the last tile's count: its exclusive sum is the total.
    if (blockIdx.x == 0)
      block_counts[gridDim.x] = 0;
  }
}

/// Second pass: one tile a block, one mask word a thread. A word's hits go at the tile's
/// offset plus the hits of the tile's earlier words, so indices come out in ascending order;
/// those at or past `capacity` are dropped.
__global__ __launch_bounds__(tile_words) void write_indices(
  const float* __restrict__ residual, const std::uint32_t* __restrict__ hit_masks,
  const std::uint32_t* __restrict__ block_counts, const std::uint32_t* __restrict__ block_offsets,
  std::int32_t* __restrict__ indices, std::size_t capacity) {
  using block_scan = cub::BlockScan<unsigned, tile_words>;
  __shared__ typename block_scan::TempStorage scan_storage;

  const std::size_t tile_offset = block_offsets[blockIdx.x];
  // The same for every thread of the block, so no thread misses the scan below.
  if (block_counts[blockIdx.x] == 0 || tile_offset >= capacity)
    return;
  std::uint32_t word = hit_masks[std::size_t{blockIdx.x} * tile_words + threadIdx.x];
  unsigned earlier = 0;
  block_scan(scan_storage).ExclusiveSum(static_cast<unsigned>(__popc(word)), earlier);
  std::size_t position = tile_offset + earlier;
  const std::size_t word_begin =
    std::size_t{blockIdx.x} * tile_elements + std::size_t{threadIdx.x} * bits_per_word;
  while (word != 0 && position < capacity) {
    const unsigned bit = __ffs(word) - 1;
    word &= word - 1;
    const std::size_t i = word_begin + bit;
    const auto index = static_cast<std::int32_t>(i + 1);
    indices[position++] = residual[i] > 0.0f ? index : -index;
  }
}

__global__ void commit_kernel(float* __restrict__ residual,
                              const std::int32_t* __restrict__ indices, std::size_t count,
                              float threshold) {
  const std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (k >= count)
    return;
  // Widened first, so that INT32_MIN negates (as the host's element_of).
  const std::int64_t index = indices[k];
  const auto i = static_cast<std::size_t>(index > 0 ? index : -index) - 1;
  residual[i] = __fadd_rn(residual[i], index > 0 ? -threshold : threshold);
}

/// cub's scratch bytes for the scan over `items` tile counts.
std::size_t scan_storage_bytes(std::uint32_t* counts, std::uint32_t* offsets, std::size_t items) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, offsets, items),
        "threshold_scan: cub::DeviceScan::ExclusiveSum (size query)");
  return bytes;
}

template <bool Vector, bool Also>
void launch_mark_hits(std::size_t tiles, float* residual, const float* update, float* also,
                      std::size_t n, float threshold, float scale,
                      threshold_scan_workspace& workspace, cudaStream_t stream) {
  mark_hits<Vector, Also><<<static_cast<unsigned>(tiles), tile_threads, 0, stream>>>(
    residual, update, also, n, threshold, scale, workspace.hit_masks.data(),
    workspace.block_counts.data());
  check_launch("threshold_scan: mark_hits");
}

} // namespace

threshold_scan_workspace::threshold_scan_workspace(std::size_t elements) : elements_(elements) {
  // The indices are signed 32-bit and 1-based.
  if (elements > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("threshold_scan_workspace: " + std::to_string(elements) +
                                " elements do not fit signed 32-bit indices");
  const std::size_t tiles = tiles_for(elements);
  hit_masks.resize(tiles * tile_words);
  block_counts.resize(tiles + 1);
  block_offsets.resize(tiles + 1);
  scan_storage.resize(scan_storage_bytes(block_counts.data(), block_offsets.data(), tiles + 1));
  host_total.resize(1);
}

std::size_t threshold_scan(float* residual, const float* update, std::size_t n, float threshold,
                           std::int32_t* indices, std::size_t capacity, float scale, float* also,
                           threshold_scan_workspace& workspace, cuda_context& ctx) {
  if (n > workspace.elements())
    throw std::invalid_argument("cuda threshold_scan: " + std::to_string(n) +
                                " elements, the workspace holds " +
                                std::to_string(workspace.elements()));
  if (n == 0)
    return 0;
  const cudaStream_t stream = ctx.stream();
  const std::size_t tiles = tiles_for(n);
  const bool vector =
    quad_aligned(residual) && quad_aligned(update) && (also == nullptr || quad_aligned(also));
  if (also == nullptr) {
    if (vector)
      launch_mark_hits<true, false>(tiles, residual, update, also, n, threshold, scale,
                                    workspace, stream);
    else
      launch_mark_hits<false, false>(tiles, residual, update, also, n, threshold, scale,
                                     workspace, stream);
  } else {
    if (vector)
      launch_mark_hits<true, true>(tiles, residual, update, also, n, threshold, scale,
                                   workspace, stream);
    else
      launch_mark_hits<false, true>(tiles, residual, update, also, n, threshold, scale,
                                    workspace, stream);
  }

  std::uint32_t* counts = workspace.block_counts.data();
  std::uint32_t* offsets = workspace.block_offsets.data();
  std::size_t bytes = scan_storage_bytes(counts, offsets, tiles + 1);
  // Never larger than for the workspace's full size; resized rather than trusted.
  if (bytes > workspace.scan_storage.size())
    workspace.scan_storage.resize(bytes);
  check(cub::DeviceScan::ExclusiveSum(workspace.scan_storage.data(), bytes, counts, offsets,
                                      tiles + 1, stream),
        "threshold_scan: cub::DeviceScan::ExclusiveSum");

  if (capacity > 0) {
    write_indices<<<static_cast<unsigned>(tiles), tile_words, 0, stream>>>(
      residual, workspace.hit_masks.data(), counts, offsets, indices, capacity);
    check_launch("threshold_scan: write_indices");
  }
  std::uint32_t* total = workspace.host_total.data();
  check(cudaMemcpyAsync(total, offsets + tiles, sizeof *total, cudaMemcpyDeviceToHost, stream),
        "threshold_scan: cudaMemcpyAsync (the total)");
  ctx.synchronize();
  return *total;
}

void threshold_commit(float* residual, const std::int32_t* indices, std::size_t count,
                      float threshold, cuda_context& ctx) {
  if (count == 0)
    return;
  commit_kernel<<<blocks_for(count), block_threads, 0, ctx.stream()>>>(residual, indices, count,
                                                                       threshold);
  check_launch("threshold_commit");
}

} // namespace strom::compute::cuda
