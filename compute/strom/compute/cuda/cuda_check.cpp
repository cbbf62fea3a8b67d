#include "strom/compute/cuda/cuda_check.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace strom::compute::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(
      fmt::format("{}: cuBLAS status {}", what, static_cast<int>(status)));
}

void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

} // namespace strom::compute::cuda
