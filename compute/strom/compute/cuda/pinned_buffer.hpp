#pragma once
// Page-locked host memory (cudaMallocHost): the staging area that lets a copy to or from the
// device run asynchronously on a stream while the host goes on.

#include <cstddef>
#include <span>
#include <utility>

#include <cuda_runtime.h>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

template <class T>
class pinned_buffer {
public:
  pinned_buffer() = default;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  ~pinned_buffer() {
    if (data_ != nullptr)
      cudaFreeHost(data_);
  }

  /// Reallocates to `count` elements (contents are lost) unless it already holds that many.
  void resize(std::size_t count) {
    if (count == size_)
      return;
    if (data_ != nullptr)
      cudaFreeHost(std::exchange(data_, nullptr));
    size_ = 0;
    if (count > 0)
      check(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)),
            "cudaMallocHost");
    size_ = count;
  }

  T* data() noexcept { return data_; }
  std::span<T> span() noexcept { return {data_, size_}; }

private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace strom::compute::cuda
