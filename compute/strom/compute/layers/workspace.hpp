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

  /// The elements of the first `batch` samples; a batch larger than reserved is a broken
  /// invariant (the caller skipped reserve()).
  std::span<T> for_batch(std::size_t batch) {
    if (batch > max_batch_)
      throw std::logic_error(
        fmt::format("layer workspace reserved for {} samples, step has {}", max_batch_, batch));
    return {values_.data(), per_sample_ * batch};
  }

private:
  std::vector<T> values_;
  std::size_t per_sample_ = 0;
  std::size_t max_batch_ = 0;
};

} // namespace strom::compute
