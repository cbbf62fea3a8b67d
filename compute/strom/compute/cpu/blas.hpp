#pragma once
// The one door to OpenBLAS: every heavy product in strom's CPU layers goes through gemm()
// here, so <cblas.h> and its threading switch stay out of every other file.

#include <cstddef>

namespace strom::compute {

/// Row-major C = alpha * op(A) * op(B) + beta * C, where op(A) is m x k, op(B) is k x n and
/// C is m x n; lda, ldb and ldc are the row strides of A, B and C as stored.
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc);

/// Sets the number of threads OpenBLAS uses for one product (process-wide).
void set_compute_threads(int n);

/// The number of threads OpenBLAS uses for one product.
int compute_threads();

} // namespace strom::compute
