// Test matrices with fixed seeds, and the dense reference product they are checked against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "formats/csr.hpp"

namespace cgs::testing {

struct NamedMatrix {
  std::string name;
  CsrMatrix<double> A;
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

// SPD with irregular rows: random_spd's few neighbours a row, plus a hub row joined to every
// `every`-th row (a row about n / every long), diagonally dominant still: levels and row lengths
// of very different widths.
inline CsrMatrix<double> irregular_spd(index_t n, index_t hub, index_t every, unsigned seed) {
  const CsrMatrix<double> base = random_spd(n, 4, seed);
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < n; ++i)
    for (index_t k = base.row_ptr[i]; k < base.row_ptr[i + 1]; ++k) {
      rows.push_back(i);
      cols.push_back(base.col_idx[k]);
      vals.push_back(base.values[k]);
    }
  for (index_t i = 0; i < n; i += every) {
    if (i == hub) continue;
    rows.insert(rows.end(), {hub, i, hub, i});
    cols.insert(cols.end(), {i, hub, hub, i});
    vals.insert(vals.end(), {-0.5, -0.5, 0.5, 0.5});  // keeps diagonal dominance
  }
  return csr_from_triplets(n, n, rows, cols, vals);
}

// A tridiagonal SPD matrix of n rows plus row (and column) 0 joined to every row from 2 on:
// that row holds a fifth of the nonzeros, a thousand times the mean at n = 1,000. The case of
// one very long row for the planner and the GPU kernels (issue 28).
inline CsrMatrix<double> hub_and_chain(index_t n) {
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < n; ++i) {
    rows.push_back(i), cols.push_back(i), vals.push_back(i == 0 ? double(n) : 4.0);
    if (i + 1 < n) {
      rows.insert(rows.end(), {i, i + 1}), cols.insert(cols.end(), {i + 1, i});
      vals.insert(vals.end(), {-1.0, -1.0});
    }
    if (i > 1) {
      rows.insert(rows.end(), {0, i}), cols.insert(cols.end(), {i, 0});
      vals.insert(vals.end(), {-0.5, -0.5});
    }
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

// A 5-point grid's graph Laplacian, m x m, with conductances spread over 10^-decades ..
// 10^decades (log-uniform, fixed seed) and each boundary node tied to ground by 1: SPD, not a
// network's near-tree graph (mean degree ~4), and so ill-conditioned that Jacobi-CG needs
// thousands of iterations where a factor solves it at once.
inline CsrMatrix<double> weighted_grid(index_t m, double decades, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> exponent(-decades, decades);
  std::vector<index_t> rows, cols;
  std::vector<double> vals, diagonal(std::size_t(m * m), 0.0);
  auto join = [&](index_t a, index_t c) {
    const double w = std::pow(10.0, exponent(rng));
    rows.insert(rows.end(), {a, c});
    cols.insert(cols.end(), {c, a});
    vals.insert(vals.end(), {-w, -w});
    diagonal[std::size_t(a)] += w, diagonal[std::size_t(c)] += w;
  };
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < m; ++j) {
      const index_t r = i * m + j;
      if (i + 1 < m) join(r, r + m);
      if (j + 1 < m) join(r, r + 1);
      if (i == 0 || j == 0 || i + 1 == m || j + 1 == m) diagonal[std::size_t(r)] += 1;
    }
  for (index_t r = 0; r < m * m; ++r) {
    rows.push_back(r);
    cols.push_back(r);
    vals.push_back(diagonal[std::size_t(r)]);
  }
  return csr_from_triplets(m * m, m * m, rows, cols, vals);
}

// Builds CSR from per-row column lists (each sorted and unique), values uniform in [-1, 1].
inline CsrMatrix<double> csr_from_rows(index_t rows, index_t cols,
                                       const std::vector<std::vector<index_t>>& columns,
                                       std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> A;
  A.rows = rows;
  A.cols = cols;
  A.row_ptr.assign(1, 0);
  for (index_t r = 0; r < rows; ++r) {
    for (index_t c : columns[r]) {
      A.col_idx.push_back(c);
      A.values.push_back(value(rng));
    }
    A.row_ptr.push_back(index_t(A.col_idx.size()));
  }
  return A;
}

// `length` distinct sorted columns out of [0, cols).
inline std::vector<index_t> random_columns(index_t length, index_t cols, std::mt19937_64& rng) {
  length = std::min(length, cols);
  std::vector<index_t> picked;
  if (length * 4 > cols) {  // dense-ish: sample by a pass over all columns
    std::vector<index_t> all(cols);
    for (index_t c = 0; c < cols; ++c) all[c] = c;
    std::shuffle(all.begin(), all.end(), rng);
    picked.assign(all.begin(), all.begin() + length);
  } else {
    std::uniform_int_distribution<index_t> column(0, cols - 1);
    while (index_t(picked.size()) < length) {
      picked.push_back(column(rng));
      if (index_t(picked.size()) == length) {
        std::sort(picked.begin(), picked.end());
        picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
      }
    }
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Row lengths drawn from a heavy-tailed mix: many empty and short rows, some long ones.
inline CsrMatrix<double> random_varying(index_t rows, index_t cols, index_t max_length,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<index_t>> columns(rows);
  for (index_t r = 0; r < rows; ++r) {
    const double pick = u(rng);
    index_t length = 0;
    if (pick < 0.10)
      length = 0;  // empty
    else if (pick < 0.70)
      length = 1 + index_t(u(rng) * 6);  // short
    else if (pick < 0.95)
      length = 7 + index_t(u(rng) * 40);  // medium
    else
      length = index_t(std::pow(double(max_length), 0.5 + 0.5 * u(rng)));  // long tail
    columns[r] = random_columns(std::min(length, max_length), cols, rng);
  }
  return csr_from_rows(rows, cols, columns, rng);
}

// Rows of lengths around every multiple of 32 (a warp's chunk) and of a 256-thread block's
// 256, separated by empty and single-entry rows: COO segments start and end on every kind of
// chunk, warp and block boundary, also after the kernels' own divisions move them.
inline CsrMatrix<double> straddling(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<index_t> pattern = {31,  0,   32, 1,   33,  0,   0,   63,   64, 65, 1,    1,
                                        255, 256, 0,  257, 511, 512, 513, 1000, 2,  3,  1024, 4095};
  const index_t rows = index_t(pattern.size()) * 3 + 5;
  const index_t cols = 5000;
  std::vector<std::vector<index_t>> columns(rows);
  for (index_t r = 0; r < rows; ++r) {
    const index_t length = r < index_t(pattern.size()) * 3 ? pattern[r % pattern.size()] : 1;
    columns[r] = random_columns(length, cols, rng);
  }
  return csr_from_rows(rows, cols, columns, rng);
}

// One row of 100,000 entries among `rows` short ones.
inline CsrMatrix<double> long_row(index_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<index_t> short_length(0, 5);
  std::vector<std::vector<index_t>> columns(rows);
  for (index_t r = 0; r < rows; ++r) {
    columns[r] = random_columns(r == 7 ? 100000 : short_length(rng), rows, rng);
  }
  return csr_from_rows(rows, rows, columns, rng);
}

// CGS_GPU_TESTS_LIGHT (set by scripts/gpu-check.sh under compute-sanitizer, where every launch
// is slow): 2 leaves out the matrix with a row of 100,000 entries.
inline int light_level() {
  const char* level = std::getenv("CGS_GPU_TESTS_LIGHT");
  return level ? std::atoi(level) : 0;
}

// The matrices every SpMV backend, CPU and GPU, is checked on: widely varying row lengths,
// empty rows, rows that straddle warps, chunks and blocks, one row of 100,000 entries,
// n = 0, n = 1, n = 33 (not a multiple of 32), a rectangular one and two 2D Poissons.
inline std::vector<NamedMatrix> spmv_test_matrices() {
  std::vector<NamedMatrix> m;
  m.push_back({"n = 0", CsrMatrix<double>{}});
  m.push_back({"n = 1", random_matrix(1, 1, 4)});
  m.push_back({"n = 1 empty", CsrMatrix<double>{1, 1, {0, 0}, {}, {}}});
  m.push_back(
      {"50 x 50 without nonzeros", CsrMatrix<double>{50, 50, std::vector<index_t>(51, 0), {}, {}}});
  m.push_back({"n = 33", random_varying(33, 33, 33, 101)});
  m.push_back({"random 300 with empty rows", random_matrix(300, 20, 2, 3)});
  m.push_back({"random 500 (lengths 0..60)", random_matrix(500, 60, 1)});
  m.push_back({"n = 1000 heavy-tailed", random_varying(1000, 1000, 600, 102)});
  m.push_back({"random 2000 with one row of 1500", random_matrix(2000, 8, 3, 0, 1500)});
  m.push_back({"n = 4099 heavy-tailed", random_varying(4099, 4099, 2000, 103)});
  m.push_back({"40 x 70 rectangular", random_varying(40, 70, 70, 104)});
  m.push_back({"rows straddling warps and blocks", straddling(105)});
  m.push_back({"poisson 2D 7x7", poisson2d(7)});
  // Padding 0.8% of the entries: the GPU ELL kernel runs every row to the full width.
  m.push_back({"poisson 2D 100x100", poisson2d(100)});
  if (light_level() < 2) m.push_back({"one row of 100000", long_row(120000, 106)});
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

// y = A x in double: the dense product when the matrix is small enough, else a plain loop over
// the CSR entries (a few lines, none shared with the kernels under test).
inline std::vector<double> reference_product(const CsrMatrix<double>& A,
                                             const std::vector<double>& x) {
  if (double(A.rows) * A.cols <= 2.5e7) return dense_product(A, x);
  std::vector<double> y(A.rows, 0.0);
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) y[r] += A.values[k] * x[A.col_idx[k]];
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
