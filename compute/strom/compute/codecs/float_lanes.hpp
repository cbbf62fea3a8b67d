#pragma once
// Four floats at a time through GCC/Clang vector extensions (plain SSE2 on x86-64, NEON on
// arm64), for the portable kernels: the auto-vectoriser gives up on loops whose branch is
// rare but present (an element that reaches a threshold).

#include <cstddef>
#include <cstdint>

namespace strom::compute {

using float_lanes = float __attribute__((vector_size(16)));
using mask_lanes = std::int32_t __attribute__((vector_size(16)));
inline constexpr std::size_t float_lane_count = 4;

} // namespace strom::compute
