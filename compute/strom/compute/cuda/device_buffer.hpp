#pragma once
// A typed allocation in device memory (cudaMalloc, never managed memory), with the copies
// to and from host spans that the backend needs. Copies are ordered on the given stream.

#include <cstddef>
#include <span>
#include <utility>

#include <cuda_runtime.h>

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

template <class T>
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) { resize(count); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~device_buffer() {
    if (data_ != nullptr)
      cudaFree(data_);
  }

  /// Reallocates to `count` elements (contents are lost) unless it already holds that many.
  void resize(std::size_t count) {
    if (count == size_)
      return;
    if (data_ != nullptr)
      cudaFree(std::exchange(data_, nullptr));
    size_ = 0;
    if (count > 0)
      check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)), "cudaMalloc");
    size_ = count;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  /// Copies `from` into the first from.size() elements.
  void upload(std::span<const T> from, cudaStream_t stream, std::size_t offset = 0) {
    check(cudaMemcpyAsync(data_ + offset, from.data(), from.size_bytes(),
                          cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync (to the device)");
  }
  /// Copies the first to.size() elements (from `offset`) into `to`.
  void download(std::span<T> to, cudaStream_t stream, std::size_t offset = 0) const {
    check(cudaMemcpyAsync(to.data(), data_ + offset, to.size_bytes(), cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpyAsync (to the host)");
  }

private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace strom::compute::cuda
