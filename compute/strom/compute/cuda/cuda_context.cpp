#include "strom/compute/cuda/cuda_context.hpp"

#include "strom/compute/cuda/cuda_check.hpp"

namespace strom::compute::cuda {

cuda_context::cuda_context() {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  try {
    check(cublasCreate(&blas_), "cublasCreate");
    check(cublasSetStream(blas_, stream_), "cublasSetStream");
  } catch (...) {
    if (blas_ != nullptr)
      cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
    throw;
  }
}

cuda_context::~cuda_context() {
  cublasDestroy(blas_);
  cudaStreamDestroy(stream_);
}

void cuda_context::synchronize() const {
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

} // namespace strom::compute::cuda
