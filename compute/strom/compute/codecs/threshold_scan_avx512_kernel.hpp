#pragma once
// The AVX-512F threshold scan loop, shared by kernels that get each update in a different
// way: threshold_scan_avx512 loads a stored update; Adam's scan_step computes it in the same
// pass (adam_scan_avx512). Include only from files whose callers check for AVX-512F at run
// time: every function here is compiled for it.

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace strom::compute::avx512 {

inline constexpr std::size_t lanes = 16;

/// The scan's running position: the hits so far and the 1-based indices of the next block.
struct scan_cursor {
  std::size_t hits = 0;
  __m512i index;
};

// A target attribute rather than -mavx512f on the including file: with the flag, inline
// functions that file instantiates (from the standard library, say) could be compiled for
// AVX-512 and chosen by the linker for the whole program.

/// Scans the block of up to sixteen elements at `i`, whose update `update_of(i, in_range)`
/// gives; `in_range` masks the lanes within the buffer (all but in the last block), so that
/// no scalar tail needs its own arithmetic.
template <bool Also, class UpdateOf>
__attribute__((target("avx512f"), always_inline)) inline void
scan_block(float* r, float* also, std::size_t i, __mmask16 in_range, __m512 limit,
           __m512 factor, std::span<std::int32_t> indices, scan_cursor& cursor,
           UpdateOf& update_of) {
  // The product is rounded on its own, as in the portable kernel: GCC contracts
  // _mm512_mul_ps followed by _mm512_add_ps into one FMA, which rounds once. (The
  // zero-masking form: GCC 12's plain one warns inside its own header.)
  const __m512 change =
    _mm512_maskz_mul_round_ps(in_range, factor, update_of(i, in_range), _MM_FROUND_CUR_DIRECTION);
  const __m512 value = _mm512_add_ps(_mm512_maskz_loadu_ps(in_range, r + i), change);
  _mm512_mask_storeu_ps(r + i, in_range, value);
  if constexpr (Also)
    _mm512_mask_storeu_ps(also + i, in_range,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(in_range, also + i), change));
  const __mmask16 reached =
    _mm512_mask_cmp_ps_mask(in_range, _mm512_abs_ps(value), limit, _CMP_GE_OQ);
  if (cursor.hits + lanes <= indices.size()) [[likely]] {
    // All sixteen lanes are stored, the reached ones packed first; the rest lie past the
    // count and the next block overwrites them.
    const __mmask16 negative = _mm512_cmp_ps_mask(value, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512i signed_indices =
      _mm512_mask_sub_epi32(cursor.index, negative, _mm512_setzero_si512(), cursor.index);
    _mm512_storeu_si512(indices.data() + cursor.hits,
                        _mm512_maskz_compress_epi32(reached, signed_indices));
    cursor.hits += static_cast<std::size_t>(__builtin_popcount(reached));
  } else {
    // Near a full index buffer: one by one, so that nothing is written past it.
    for (unsigned bits = reached; bits != 0; bits &= bits - 1) {
      const std::size_t element = i + static_cast<std::size_t>(__builtin_ctz(bits));
      if (cursor.hits < indices.size()) {
        const auto index = static_cast<std::int32_t>(element + 1);
        indices[cursor.hits] = r[element] > 0.0f ? index : -index;
      }
      ++cursor.hits;
    }
  }
  cursor.index = _mm512_add_epi32(cursor.index, _mm512_set1_epi32(static_cast<int>(lanes)));
}

/// threshold_scan's loop (same arguments and result, `also` null or residual.size() floats),
/// with the update of the sixteen elements at i (lanes outside `in_range` zero) given by
/// `update_of(i, in_range)`, called once per block in order.
template <bool Also, class UpdateOf>
__attribute__((target("avx512f"))) std::size_t scan(std::span<float> residual, float threshold,
                                                     std::span<std::int32_t> indices,
                                                     float scale, float* also,
                                                     UpdateOf update_of) {
  const std::size_t n = residual.size();
  const __m512 limit = _mm512_set1_ps(threshold);
  const __m512 factor = _mm512_set1_ps(scale);
  scan_cursor cursor{0, _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    scan_block<Also>(residual.data(), also, i, static_cast<__mmask16>(0xffff), limit, factor,
                     indices, cursor, update_of);
  if (i < n)
    scan_block<Also>(residual.data(), also, i, static_cast<__mmask16>((1u << (n - i)) - 1u),
                     limit, factor, indices, cursor, update_of);
  return cursor.hits;
}

} // namespace strom::compute::avx512

#endif
