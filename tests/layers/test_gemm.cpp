#define BOOST_TEST_MODULE layers_gemm
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "gradient_check.hpp"
#include "strom/compute/cpu/blas.hpp"

using namespace strom::compute;
using strom::compute::testing::random_values;

namespace {

/// C = alpha * op(A) op(B) + beta * C by definition, row-major with leading dimensions.
void check_against_definition(bool trans_a, bool trans_b) {
  const std::size_t m = 4, n = 5, k = 3;
  const std::size_t lda = (trans_a ? m : k) + 1;  // padded rows: strides are honoured
  const std::size_t ldb = (trans_b ? k : n) + 2;
  const std::size_t ldc = n + 1;
  rng gen(13);
  const auto a = random_values((trans_a ? k : m) * lda, gen);
  const auto b = random_values((trans_b ? n : k) * ldb, gen);
  auto c = random_values(m * ldc, gen);
  auto expected = c;
  const float alpha = 0.5f, beta = -2.0f;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double total = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        const float av = trans_a ? a[p * lda + i] : a[i * lda + p];
        const float bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        total += static_cast<double>(av) * bv;
      }
      expected[i * ldc + j] = static_cast<float>(alpha * total + beta * c[i * ldc + j]);
    }
  gemm(trans_a, trans_b, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  for (std::size_t i = 0; i < c.size(); ++i)
    BOOST_TEST(std::abs(c[i] - expected[i]) <= 1e-5f * (1.0f + std::abs(expected[i])));
}

} // namespace

BOOST_AUTO_TEST_CASE(plain_product_matches_definition) {
  check_against_definition(false, false);
}

BOOST_AUTO_TEST_CASE(transposed_a_matches_definition) {
  check_against_definition(true, false);
}

BOOST_AUTO_TEST_CASE(transposed_b_matches_definition) {
  check_against_definition(false, true);
}

BOOST_AUTO_TEST_CASE(both_transposed_match_definition) {
  check_against_definition(true, true);
}

BOOST_AUTO_TEST_CASE(compute_threads_round_trip) {
  set_compute_threads(1);
  BOOST_TEST(compute_threads() == 1);
}
