#include "strom/compute/codecs/threshold_scan_avx512.hpp"

#include "strom/compute/codecs/threshold_scan_avx512_kernel.hpp"

namespace strom::compute {

#if defined(__x86_64__) && defined(__GNUC__)

bool cpu_has_avx512f() noexcept {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

std::optional<std::size_t> threshold_scan_avx512(std::span<float> residual,
                                                 std::span<const float> update, float threshold,
                                                 std::span<std::int32_t> indices, float scale,
                                                 float* also) {
  if (!cpu_has_avx512f())
    return std::nullopt;
  const float* u = update.data();
  const auto stored = [u](std::size_t i, __mmask16 in_range)
    __attribute__((target("avx512f"))) { return _mm512_maskz_loadu_ps(in_range, u + i); };
  return also ? avx512::scan<true>(residual, threshold, indices, scale, also, stored)
              : avx512::scan<false>(residual, threshold, indices, scale, nullptr, stored);
}

#else

bool cpu_has_avx512f() noexcept { return false; }

std::optional<std::size_t> threshold_scan_avx512(std::span<float>, std::span<const float>, float,
                                                 std::span<std::int32_t>, float, float*) {
  return std::nullopt;
}

#endif

} // namespace strom::compute
