#pragma once
// Sizes computed from outside input (job files) can exceed 64 bits: a 2^28-float layer of
// 2^28-float samples has 2^56 weights, a batch of those activations more. Checks compare
// saturated sizes against their limits instead of sizes that wrapped around.

#include <cstdint>
#include <limits>

namespace strom::compute {

/// a * b, or the largest uint64 when that overflows.
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max()
                                                : product;
}

/// a + b, or the largest uint64 when that overflows.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

} // namespace strom::compute
