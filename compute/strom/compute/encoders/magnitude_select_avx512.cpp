#include "strom/compute/encoders/magnitude_select_avx512.hpp"

#include "strom/compute/codecs/threshold_scan_avx512.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <algorithm>
#include <limits>

namespace strom::compute {

namespace {

constexpr std::size_t lanes = 16;
/// Elements summed in float lanes before the sum goes into the double, and the power of two
/// they are scaled by there: each lane then adds at most sum_block / lanes of FLT_MAX / 512,
/// so no sum of finite magnitudes overflows (the scaling is exact but for tiny subnormals).
constexpr std::size_t sum_block = 256;
constexpr float sum_shrink = 1.0f / 512.0f;

/// The sum of the sixteen lanes. (Not _mm512_reduce_add_ps: GCC 12 warns inside its header.)
__attribute__((target("avx512f"))) double lane_sum(__m512 lanes_of_sums) {
  alignas(64) float part[lanes];
  _mm512_store_ps(part, lanes_of_sums);
  double sum = 0.0;
  for (const float p : part)
    sum += static_cast<double>(p);
  return sum / static_cast<double>(sum_shrink);
}

// A target attribute rather than -mavx512f on this file (threshold_scan_avx512_kernel.hpp).
__attribute__((target("avx512f"))) magnitude_selection
select(std::span<const float> values, float threshold, std::span<std::int32_t> indices) {
  magnitude_selection out;
  const float* v = values.data();
  const std::size_t n = values.size();
  const __m512 limit = _mm512_set1_ps(threshold);
  const __m512 largest = _mm512_set1_ps(std::numeric_limits<float>::max());
  const __m512 shrink = _mm512_set1_ps(sum_shrink);
  const __m512i step = _mm512_set1_epi32(static_cast<int>(lanes));
  __m512i index = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  std::size_t i = 0;
  while (i < n) {
    const std::size_t end = std::min(n, i + sum_block);
    __m512 total = _mm512_setzero_ps();
    __m512 selected = _mm512_setzero_ps();
    for (; i < end; i += lanes) {
      // The lanes past the end load zero, which counts nothing and reaches no threshold > 0.
      const auto in_range = static_cast<__mmask16>(
        end - i >= lanes ? 0xffffu : (1u << (end - i)) - 1u);
      const __m512 x = _mm512_maskz_loadu_ps(in_range, v + i);
      const __m512 magnitude = _mm512_abs_ps(x);
      // NaN counts nothing and inf the largest float, as in the portable kernel.
      const __mmask16 ordered = _mm512_cmp_ps_mask(magnitude, magnitude, _CMP_ORD_Q);
      const __m512 counted =
        _mm512_mul_ps(_mm512_maskz_min_ps(ordered, magnitude, largest), shrink);
      total = _mm512_add_ps(total, counted);
      const __mmask16 reached = _mm512_cmp_ps_mask(magnitude, limit, _CMP_GE_OQ);
      if (reached != 0) {
        const auto count = static_cast<std::size_t>(__builtin_popcount(reached));
        if (out.hits + count > indices.size()) {
          out.hits = indices.size() + 1;
          return out;
        }
        selected = _mm512_mask_add_ps(selected, reached, selected, counted);
        const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
        const __m512i signed_indices =
          _mm512_mask_sub_epi32(index, negative, _mm512_setzero_si512(), index);
        // Sixteen lanes stored where there is room for them (a compress to memory is slow on
        // many CPUs), only the packed ones near the end of the list.
        if (out.hits + lanes <= indices.size())
          _mm512_storeu_si512(indices.data() + out.hits,
                              _mm512_maskz_compress_epi32(reached, signed_indices));
        else
          _mm512_mask_compressstoreu_epi32(indices.data() + out.hits, reached, signed_indices);
        out.hits += count;
      }
      index = _mm512_add_epi32(index, step);
    }
    out.total_mass += lane_sum(total);
    out.selected_mass += lane_sum(selected);
  }
  return out;
}

} // namespace

std::optional<magnitude_selection> magnitude_select_avx512(std::span<const float> values,
                                                           float threshold,
                                                           std::span<std::int32_t> indices) {
  if (!cpu_has_avx512f())
    return std::nullopt;
  return select(values, threshold, indices);
}

} // namespace strom::compute

#else

namespace strom::compute {

std::optional<magnitude_selection> magnitude_select_avx512(std::span<const float>, float,
                                                           std::span<std::int32_t>) {
  return std::nullopt;
}

} // namespace strom::compute

#endif
