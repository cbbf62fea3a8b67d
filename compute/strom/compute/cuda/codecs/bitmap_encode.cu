// bitmap_encode with one thread per four elements: a warp loads 512 contiguous bytes at a
// time, and the four lanes of one 16-element word combine their bits by shuffles. Measured
// on an H200 (bench_cuda_encode): 0.82 of a device-to-device copy's rate at 2^26 elements,
// counting 8.125 bytes an element (residual read and written, the words written).

#include "strom/compute/cuda/bitmap_encode.hpp"

#include <cstdint>

#include <cub/block/block_reduce.cuh>

#include "strom/compute/codecs/bitmap_codec.hpp"
#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

namespace {

constexpr unsigned floats_per_quad = 4;
constexpr unsigned values_per_word = 16;  // as codecs/bitmap_codec.cpp
constexpr unsigned sign_shift = 16;       // the sign bits sit in the word's upper half
constexpr unsigned quads_per_word = values_per_word / floats_per_quad;
constexpr unsigned full_warp = 0xffffffffu;

/// One element, as the host loop: its step and sign bits (bit 0 and bit 1 of the result) and
/// the residual less what the receiver will add, rounded after each term in the host's order
/// (v - plus + minus + half), so that even -0 comes out the same.
__device__ inline unsigned encode_element(float& value, float threshold, float half) {
  const float v = value;
  const bool plus = v >= threshold;
  const bool minus = v <= -threshold;
  const bool minus_half = !minus && v <= -half;
  value = __fadd_rn(__fadd_rn(__fsub_rn(v, plus ? threshold : 0.0f), minus ? threshold : 0.0f),
                    minus_half ? half : 0.0f);
  return static_cast<unsigned>(plus || minus) | static_cast<unsigned>(minus || minus_half) << 1;
}

/// Thread q encodes elements 4 q .. 4 q + 3; lanes 4 w .. 4 w + 3 of a warp make word w of
/// the warp's four. `Vector`: the residual is 16-byte aligned.
template <bool Vector>
__global__ __launch_bounds__(block_threads) void bitmap_kernel(float* __restrict__ residual,
                                                               std::size_t n, float threshold,
                                                               std::uint32_t* __restrict__ words,
                                                               std::uint32_t* __restrict__ count) {
  using block_reduce = cub::BlockReduce<unsigned, block_threads>;
  __shared__ typename block_reduce::TempStorage reduce_storage;

  const std::size_t quad = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t first = quad * floats_per_quad;
  const unsigned lane = threadIdx.x % 32;
  unsigned steps = 0;
  unsigned signs = 0;
  if (Vector && first + floats_per_quad <= n) {
    float4 r = reinterpret_cast<float4*>(residual)[quad];
    const unsigned x = encode_element(r.x, threshold, 0.5f * threshold);
    const unsigned y = encode_element(r.y, threshold, 0.5f * threshold);
    const unsigned z = encode_element(r.z, threshold, 0.5f * threshold);
    const unsigned w = encode_element(r.w, threshold, 0.5f * threshold);
    reinterpret_cast<float4*>(residual)[quad] = r;
    steps = (x & 1u) | (y & 1u) << 1 | (z & 1u) << 2 | (w & 1u) << 3;
    signs = (x >> 1) | (y >> 1) << 1 | (z >> 1) << 2 | (w >> 1) << 3;
  } else {
    for (unsigned j = 0; j < floats_per_quad; ++j) {
      const std::size_t i = first + j;
      if (i < n) {
        float r = residual[i];
        const unsigned bits = encode_element(r, threshold, 0.5f * threshold);
        residual[i] = r;
        steps |= (bits & 1u) << j;
        signs |= (bits >> 1) << j;
      }
    }
  }
  const unsigned shift = floats_per_quad * (lane % quads_per_word);
  std::uint32_t word = steps << shift | signs << (shift + sign_shift);
  word |= __shfl_xor_sync(full_warp, word, 1);
  word |= __shfl_xor_sync(full_warp, word, 2);
  unsigned values = 0;
  // The word's first lane writes it, where the word covers any element.
  if (lane % quads_per_word == 0 && first < n) {
    words[quad / quads_per_word] = word;
    values = static_cast<unsigned>(__popc((word | (word >> sign_shift)) & 0xffffu));
  }
  const unsigned block_values = block_reduce(reduce_storage).Sum(values);
  if (threadIdx.x == 0 && block_values != 0)
    atomicAdd(count, block_values);
}

} // namespace

std::size_t bitmap_encode(float* residual, std::size_t n, float threshold, std::uint32_t* words,
                          device_buffer<std::uint32_t>& count, cuda_context& ctx) {
  if (n == 0)
    return 0;
  if (count.empty())
    count.resize(1);
  const cudaStream_t stream = ctx.stream();
  check(cudaMemsetAsync(count.data(), 0, sizeof(std::uint32_t), stream),
        "bitmap_encode: cudaMemsetAsync");
  const std::size_t quads = (n + floats_per_quad - 1) / floats_per_quad;
  if (reinterpret_cast<std::uintptr_t>(residual) % sizeof(float4) == 0)
    bitmap_kernel<true><<<blocks_for(quads), block_threads, 0, stream>>>(residual, n, threshold,
                                                                         words, count.data());
  else
    bitmap_kernel<false><<<blocks_for(quads), block_threads, 0, stream>>>(residual, n, threshold,
                                                                          words, count.data());
  check_launch("bitmap_encode");
  std::uint32_t values = 0;
  count.download(std::span<std::uint32_t>(&values, 1), stream);
  ctx.synchronize();
  return values;
}

} // namespace strom::compute::cuda
