#include "strom/compute/updaters/adam_scan_avx512.hpp"

#include "strom/compute/codecs/threshold_scan_avx512.hpp"
#include "strom/compute/codecs/threshold_scan_avx512_kernel.hpp"

namespace strom::compute {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

/// a * b in the lanes of `k` (zero elsewhere), rounded on its own: GCC contracts a plain
/// multiply followed by an add into one FMA, which would change bits (see scan_block).
__attribute__((target("avx512f"), always_inline)) inline __m512 mul(__mmask16 k, __m512 a,
                                                                   __m512 b) {
  return _mm512_maskz_mul_round_ps(k, a, b, _MM_FROUND_CUR_DIRECTION);
}

__attribute__((target("avx512f"))) std::size_t
fused_scan(const float* g, float* m, float* v, const adam_step_constants& c,
           const threshold_scan_args& scan) {
  const __m512 beta1 = _mm512_set1_ps(c.beta1);
  const __m512 rest1 = _mm512_set1_ps(1.0f - c.beta1);
  const __m512 beta2 = _mm512_set1_ps(c.beta2);
  const __m512 rest2 = _mm512_set1_ps(1.0f - c.beta2);
  const __m512 epsilon = _mm512_set1_ps(c.epsilon);
  const __m512 step_size = _mm512_set1_ps(c.step_size);
  const __m512 correction = _mm512_set1_ps(c.second_correction);
  // The operations of adam_updater's update_of, in its order.
  const auto adam = [&](std::size_t i, __mmask16 k) __attribute__((target("avx512f"))) {
    const __m512 grad = _mm512_maskz_loadu_ps(k, g + i);
    const __m512 first =
      _mm512_add_ps(mul(k, beta1, _mm512_maskz_loadu_ps(k, m + i)), mul(k, rest1, grad));
    const __m512 second = _mm512_add_ps(mul(k, beta2, _mm512_maskz_loadu_ps(k, v + i)),
                                        mul(k, mul(k, rest2, grad), grad));
    _mm512_mask_storeu_ps(m + i, k, first);
    _mm512_mask_storeu_ps(v + i, k, second);
    const __m512 root = _mm512_maskz_sqrt_ps(k, mul(k, second, correction));
    return _mm512_maskz_div_ps(k, mul(k, step_size, first), _mm512_add_ps(root, epsilon));
  };
  return scan.also.empty()
           ? avx512::scan<false>(scan.residual, scan.threshold, scan.indices, scan.scale,
                                 nullptr, adam)
           : avx512::scan<true>(scan.residual, scan.threshold, scan.indices, scan.scale,
                                scan.also.data(), adam);
}

} // namespace

std::optional<std::size_t> adam_scan_avx512(std::span<const float> gradient,
                                            std::span<float> first, std::span<float> second,
                                            const adam_step_constants& constants,
                                            const threshold_scan_args& scan) {
  if (!cpu_has_avx512f())
    return std::nullopt;
  return fused_scan(gradient.data(), first.data(), second.data(), constants, scan);
}

#else

std::optional<std::size_t> adam_scan_avx512(std::span<const float>, std::span<float>,
                                            std::span<float>, const adam_step_constants&,
                                            const threshold_scan_args&) {
  return std::nullopt;
}

#endif

} // namespace strom::compute
