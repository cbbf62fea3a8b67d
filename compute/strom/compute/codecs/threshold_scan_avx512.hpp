#pragma once
// threshold_scan on AVX-512F, chosen at run time so that the build stays baseline x86-64.
// Sixteen lanes per step, and the indices of the elements that reached the threshold are
// packed with a compress instead of a branch: with the residual in cache, at 0.6-1.2%
// density, the portable kernel's mispredicted branches cost as much as its arithmetic
// (microbenchmark). In a training step the residual comes from memory and the gain is small.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace strom::compute {

/// Whether this CPU runs AVX-512F (and this is an x86-64 build): the run-time choice of every
/// AVX-512 kernel here.
bool cpu_has_avx512f() noexcept;

/// threshold_scan (same arguments and results; `also` null or residual.size() floats) on
/// AVX-512F, or nullopt when this CPU has none or this is not an x86-64 build. Index entries
/// past the returned count may be overwritten.
std::optional<std::size_t> threshold_scan_avx512(std::span<float> residual,
                                                 std::span<const float> update, float threshold,
                                                 std::span<std::int32_t> indices, float scale,
                                                 float* also);

} // namespace strom::compute
