// Shared by the GPU tests: the skip rule, test matrices from fixed seeds, a host reference SpMV
// in double, and small vector helpers.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "formats/csr.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "test_matrices.hpp"

namespace cgs::gputest {

// Every GPU test case starts with this: on a machine without a usable GPU (CI, developers'
// machines) it prints why and the test case passes as skipped.
#define CGS_REQUIRE_GPU_OR_SKIP()                   \
  do {                                              \
    std::string cgs_why_;                           \
    if (!::cgs::cuda_device_available(&cgs_why_)) { \
      MESSAGE("skipped: no GPU: " << cgs_why_);     \
      return;                                       \
    }                                               \
  } while (0)

using testing::light_level;
using testing::NamedMatrix;
using testing::spmv_test_matrices;

// y = A x and the per-row magnitude sum |A| |x|, in double.
struct Reference {
  std::vector<double> y, magnitude;
};

template <typename T>
Reference reference_product(const CsrMatrix<T>& A, const std::vector<T>& x) {
  Reference ref{std::vector<double>(A.rows, 0.0), std::vector<double>(A.rows, 0.0)};
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      const double term = double(A.values[k]) * double(x[A.col_idx[k]]);
      ref.y[r] += term;
      ref.magnitude[r] += std::abs(term);
    }
  }
  return ref;
}

// Largest error of any row relative to that row's |A| |x| (the scale of its rounding errors);
// a row with |A| |x| = 0 must come out exactly 0. Infinity when an entry is not finite.
template <typename T>
double worst_row_error(const std::vector<T>& y, const Reference& ref) {
  double worst = 0;
  for (std::size_t r = 0; r < y.size(); ++r) {
    if (!std::isfinite(double(y[r]))) return INFINITY;
    const double error = std::abs(double(y[r]) - ref.y[r]);
    if (ref.magnitude[r] == 0) {
      if (error != 0) return INFINITY;
    } else {
      worst = std::max(worst, error / ref.magnitude[r]);
    }
  }
  return worst;
}

template <typename T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) e = T(u(rng));
  return v;
}

inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, ref = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    ref += b[i] * b[i];
  }
  return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

}  // namespace cgs::gputest
