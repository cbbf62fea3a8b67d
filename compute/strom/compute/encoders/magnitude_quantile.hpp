#pragma once
// The self-calibrating threshold's estimator: the magnitude above which a wanted share of a
// tensor's elements lie, from an even sample of them (a sampled quantile, as in Shi et al.
// 2019, "Understanding Top-k Sparsification": the exact top-k of a whole layer costs a sort
// of it every step, a sample of a few thousand finds the same threshold within a few percent).

#include <cstddef>
#include <span>
#include <vector>

namespace strom::compute {

/// Elements the estimator looks at per tensor at most: its rank error is about
/// 1/sqrt(sample * keep), 7% at keep = 1%.
inline constexpr std::size_t default_quantile_sample = 2048;

/// The magnitude at or above which about `keep` (in (0, 1]) of `values` lie: the (1 - keep)
/// quantile of |value|, estimated from at most `sample` elements taken at an even stride
/// whose first element moves with `start` (every element when there are no more than
/// `sample`). NaN counts as 0 and infinity as the largest float, so the result is finite and
/// >= 0; 0 for an empty span. `workspace` is reused between calls.
float magnitude_quantile(std::span<const float> values, double keep, std::size_t start,
                         std::vector<float>& workspace,
                         std::size_t sample = default_quantile_sample);

} // namespace strom::compute
