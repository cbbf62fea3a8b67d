#pragma once
// Scratch memory a layer sizes once in reserve() and reuses every step, so that forward
// and backward never allocate.

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace strom::compute {

/// Per-sample scratch elements for batches of up to a reserved number of samples.
template <class T>
class workspace {
public:
  /// Makes room for `max_batch` samples of `per_sample` elements each.
  void reserve(std::size_t per_sample, std::size_t max_batch) {
    per_sample_ = per_sample;
    max_batch_ = max_batch;
    values_.assign(per_sample * max_batch, T{});
  }

  /// The elements of samples [first, first + count); rows past the reserved batch are a
  /// broken invariant (the caller skipped reserve()).
  std::span<T> for_rows(std::size_t first, std::size_t count) {
    if (first > max_batch_ || count > max_batch_ - first)
      throw std::logic_error(fmt::format("layer workspace reserved for {} samples, step has "
                                         "rows [{}, {})", max_batch_, first, first + count));
    return {values_.data() + per_sample_ * first, per_sample_ * count};
  }

private:
  std::vector<T> values_;
  std::size_t per_sample_ = 0;
  std::size_t max_batch_ = 0;
};

} // namespace strom::compute
