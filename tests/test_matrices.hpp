// Test matrices with fixed seeds, and the dense reference product they are checked against.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "formats/csr.hpp"

namespace cgs::testing {

struct NamedMatrix {
  std::string name;
  CsrMatrix<double> matrix;
};

// Random n x n matrix whose row lengths vary widely (0 up to max_length), with `empty_every`-th
// rows empty, and optionally one very long row. Values in [-1, 1], fixed seed.
inline CsrMatrix<double> random_matrix(index_t n, index_t max_length, unsigned seed,
                                       index_t empty_every = 0, index_t long_row_length = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t r = 0; r < n; ++r) {
    if (empty_every > 0 && r % empty_every == empty_every - 1) continue;
    // Skewed lengths: most rows short, a few long (a cube of a uniform number).
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    index_t length = index_t(std::round(u * u * u * max_length));
    if (long_row_length > 0 && r == n / 2) length = long_row_length;
    for (index_t k = 0; k < length; ++k) {
      rows.push_back(r);
      cols.push_back(column(rng));
      vals.push_back(value(rng));
    }
  }
  return csr_from_triplets(n, n, rows, cols, vals);  // duplicates summed
}

// Symmetric positive definite: a random sparse symmetric pattern with a dominant diagonal.
inline CsrMatrix<double> random_spd(index_t n, index_t per_row, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 0.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  std::vector<double> diagonal(n, 1.0);
  for (index_t r = 0; r < n; ++r)
    for (index_t k = 0; k < per_row; ++k) {
      const index_t c = column(rng);
      if (c == r) continue;
      const double v = value(rng);
      rows.insert(rows.end(), {r, c});
      cols.insert(cols.end(), {c, r});
      vals.insert(vals.end(), {v, v});
      diagonal[r] -= v;
      diagonal[c] -= v;
    }
  for (index_t r = 0; r < n; ++r) {
    rows.push_back(r);
    cols.push_back(r);
    vals.push_back(diagonal[r]);
  }
  return csr_from_triplets(n, n, rows, cols, vals);
}

// 2D 5-point Laplacian on an m x m grid (Dirichlet boundary): n = m^2, SPD.
inline CsrMatrix<double> poisson2d(index_t m) {
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  auto add = [&](index_t r, index_t c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(v);
  };
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < m; ++j) {
      const index_t r = i * m + j;
      add(r, r, 4.0);
      if (i > 0) add(r, r - m, -1.0);
      if (i + 1 < m) add(r, r + m, -1.0);
      if (j > 0) add(r, r - 1, -1.0);
      if (j + 1 < m) add(r, r + 1, -1.0);
    }
  return csr_from_triplets(m * m, m * m, rows, cols, vals);
}

// The matrices every backend is checked on: varied lengths, empty rows, a very long row,
// n = 1, n = 33 (not a multiple of 32), and a zero-row matrix.
inline std::vector<NamedMatrix> spmv_test_matrices() {
  std::vector<NamedMatrix> m;
  m.push_back({"random 500 (lengths 0..60)", random_matrix(500, 60, 1)});
  m.push_back({"random 300 with empty rows", random_matrix(300, 20, 2, 3)});
  m.push_back({"random 2000 with one row of 1500", random_matrix(2000, 8, 3, 0, 1500)});
  m.push_back({"n = 1", random_matrix(1, 1, 4)});
  m.push_back({"n = 1 empty", CsrMatrix<double>{1, 1, {0, 0}, {}, {}}});
  m.push_back({"n = 33", random_matrix(33, 40, 5)});
  m.push_back({"poisson 2D 7x7", poisson2d(7)});
  return m;
}

inline std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& e : v) e = value(rng);
  return v;
}

// y = A x from the dense copy of A: independent of every sparse kernel.
inline std::vector<double> dense_product(const CsrMatrix<double>& A, const std::vector<double>& x) {
  const std::vector<double> D = to_dense(A);
  std::vector<double> y(A.rows, 0.0);
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t c = 0; c < A.cols; ++c) y[r] += D[std::size_t(r) * A.cols + c] * x[c];
  return y;
}

// max_i |a_i - b_i| / max(max_i |b_i|, tiny): one relative error for the whole vector.
template <typename T>
double relative_error(const std::vector<T>& a, const std::vector<double>& b) {
  double difference = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    difference = std::max(difference, std::abs(double(a[i]) - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return difference / std::max(scale, 1e-300);
}

}  // namespace cgs::testing
