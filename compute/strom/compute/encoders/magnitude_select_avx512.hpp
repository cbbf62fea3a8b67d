#pragma once
// magnitude_select on AVX-512F, chosen at run time (cpu_has_avx512f): sixteen magnitudes
// summed per instruction and the reached elements packed with a compress.

#include <optional>

#include "strom/compute/encoders/magnitude_select.hpp"

namespace strom::compute {

/// magnitude_select's result on AVX-512F, or nullopt when this CPU has none or this is not an
/// x86-64 build. Index entries past the returned count may be overwritten.
std::optional<magnitude_selection> magnitude_select_avx512(std::span<const float> values,
                                                           float threshold,
                                                           std::span<std::int32_t> indices);

} // namespace strom::compute
