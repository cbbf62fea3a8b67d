#pragma once
// What every kernel of one replica runs on: its own stream (several replicas share one GPU
// by running on their own streams) and a cuBLAS handle bound to that stream.

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace strom::compute::cuda {

class cuda_context {
public:
  /// A new non-blocking stream on the current device and a cuBLAS handle on it.
  cuda_context();
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;
  ~cuda_context();

  cudaStream_t stream() const noexcept { return stream_; }
  cublasHandle_t blas() const noexcept { return blas_; }
  /// Waits for everything queued on the stream; throws on an asynchronous error.
  void synchronize() const;

private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

/// Threads per block for element-wise kernels, and the blocks that cover n elements.
inline constexpr unsigned block_threads = 256;
inline unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + block_threads - 1) / block_threads);
}

} // namespace strom::compute::cuda
