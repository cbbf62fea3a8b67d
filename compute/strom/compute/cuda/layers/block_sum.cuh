#pragma once
// The per-channel and per-batch reductions of the device layers: one block sums what its
// threads hold, a warp by shuffles and the warps through shared memory, in a fixed order so
// that a run repeats bit for bit (atomics would not).

namespace strom::compute::cuda {

/// Threads per block of the reducing kernels: a multiple of the warp size, at most 1024.
inline constexpr unsigned reduce_threads = 256;

/// The sum of `value` over the warp, in every lane.
template <class T>
__device__ inline T warp_sum(T value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// The largest `value` over the warp, in every lane.
__device__ inline float warp_max(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// The sum of `value` over the block, in every thread; every thread of the block must call it
/// (it synchronises), and blockDim.x must be a multiple of 32.
template <class T>
__device__ inline T block_sum(T value) {
  __shared__ T warp_totals[32];
  __shared__ T total;
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  value = warp_sum(value);
  if (lane == 0)
    warp_totals[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < blockDim.x / 32 ? warp_totals[lane] : T{};
    value = warp_sum(value);
    if (lane == 0)
      total = value;
  }
  __syncthreads();
  return total;
}

} // namespace strom::compute::cuda
