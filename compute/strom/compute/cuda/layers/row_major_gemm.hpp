#pragma once
// cuBLAS is column-major and strom's matrices are row-major. A row-major C = op(A) * op(B) is,
// over the same storage, the column-major C^T = op(B)^T * op(A)^T: swapping the operands and
// the two outer sizes lets the device layers call gemm with the host layers' arguments
// (cpu/blas.hpp), so each call can be read against its host line.

#include <cstddef>

#include "strom/compute/cuda/cuda_check.hpp"
#include "strom/compute/cuda/cuda_context.hpp"

namespace strom::compute::cuda {

/// Row-major C = alpha * op(A) * op(B) + beta * C on ctx's stream, op(A) m x k, op(B) k x n;
/// lda, ldb and ldc are the row strides as stored. `what` names the call in errors.
inline void gemm(cuda_context& ctx, bool trans_a, bool trans_b, std::size_t m, std::size_t n,
                 std::size_t k, float alpha, const float* a, std::size_t lda, const float* b,
                 std::size_t ldb, float beta, float* c, std::size_t ldc, const char* what) {
  check(cublasSgemm(ctx.blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                    trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                    static_cast<int>(m), static_cast<int>(k), &alpha, b, static_cast<int>(ldb),
                    a, static_cast<int>(lda), &beta, c, static_cast<int>(ldc)),
        what);
}

} // namespace strom::compute::cuda
