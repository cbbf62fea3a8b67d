#pragma once
// Every CUDA runtime and cuBLAS call goes through check(): a failure becomes an exception
// that names the call, instead of an error code nobody reads.

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace strom::compute::cuda {

/// Throws std::runtime_error("<what>: <CUDA's message>") unless `status` is cudaSuccess.
void check(cudaError_t status, const char* what);
/// Throws std::runtime_error("<what>: cuBLAS status <n>") unless `status` is success.
void check(cublasStatus_t status, const char* what);
/// check(cudaGetLastError(), what): after a kernel launch.
void check_launch(const char* what);

} // namespace strom::compute::cuda
