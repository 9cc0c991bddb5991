// Matrix generators: sizes, row lengths, symmetry, positive definiteness, reproducibility, and
// the errors for bad specs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"

using namespace cgs;

namespace {

// Dense Cholesky: succeeds (every pivot > 0) exactly when the symmetric matrix is positive
// definite. Small matrices only.
bool cholesky_succeeds(const CsrMatrix<double>& A) {
  const std::size_t n = std::size_t(A.rows);
  std::vector<double> L = to_dense(A);
  for (std::size_t j = 0; j < n; ++j) {
    double pivot = L[j * n + j];
    for (std::size_t k = 0; k < j; ++k) pivot -= L[j * n + k] * L[j * n + k];
    if (!(pivot > 0)) return false;
    L[j * n + j] = std::sqrt(pivot);
    for (std::size_t i = j + 1; i < n; ++i) {
      double sum = L[i * n + j];
      for (std::size_t k = 0; k < j; ++k) sum -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = sum / L[j * n + j];
    }
  }
  return true;
}

bool symmetric(const CsrMatrix<double>& A) {
  index_t row = 0, col = 0;
  return is_symmetric(A, 0.0, &row, &col);
}

// Valid CSR with columns strictly increasing in each row.
bool well_formed(const CsrMatrix<double>& A) {
  if (A.row_ptr.size() != std::size_t(A.rows) + 1 || A.row_ptr.back() != A.nnz()) return false;
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (A.col_idx[k] < 0 || A.col_idx[k] >= A.cols) return false;
      if (k > A.row_ptr[r] && A.col_idx[k] <= A.col_idx[k - 1]) return false;
    }
  }
  return true;
}

// Positive diagonal, diagonal >= sum of |off-diagonal| in every row and > in at least one, and a
// connected graph: irreducibly diagonally dominant, hence (being symmetric) positive definite.
// The proof for matrices too large for the dense Cholesky.
bool irreducibly_diagonally_dominant(const CsrMatrix<double>& A) {
  bool strict_somewhere = false;
  for (index_t r = 0; r < A.rows; ++r) {
    double diag = 0, off = 0;
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      (A.col_idx[k] == r ? diag : off) += std::abs(A.values[k]);
    if (!(diag > 0) || diag < off * (1 - 1e-12)) return false;
    strict_somewhere |= diag > off * (1 + 1e-12);
  }
  std::vector<bool> seen(A.rows, false);
  std::queue<index_t> next;
  seen[0] = true;
  next.push(0);
  index_t reached = 1;
  while (!next.empty()) {
    const index_t r = next.front();
    next.pop();
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (!seen[A.col_idx[k]]) seen[A.col_idx[k]] = true, ++reached, next.push(A.col_idx[k]);
    }
  }
  return strict_somewhere && reached == A.rows;
}

bool same(const CsrMatrix<double>& A, const CsrMatrix<double>& B) {
  return A.rows == B.rows && A.row_ptr == B.row_ptr && A.col_idx == B.col_idx &&
         A.values == B.values;
}

std::pair<index_t, index_t> row_length_range(const CsrMatrix<double>& A) {
  index_t lo = A.rows > 0 ? A.row_length(0) : 0, hi = lo;
  for (index_t r = 0; r < A.rows; ++r)
    lo = std::min(lo, A.row_length(r)), hi = std::max(hi, A.row_length(r));
  return {lo, hi};
}

}  // namespace

TEST_CASE("gen:poisson2d is the 5-point Laplacian") {
  const CsrMatrix<double> A = generate_matrix("gen:poisson2d:6");
  CHECK(A.rows == 36);
  CHECK(A.cols == 36);
  CHECK(A.nnz() == 5 * 36 - 4 * 6);
  CHECK(row_length_range(A) == std::pair<index_t, index_t>{3, 5});
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  // Row of the interior point (1, 1): neighbours 1, 6, 8, 13 and the diagonal 7.
  CHECK(std::vector<index_t>(A.col_idx.begin() + A.row_ptr[7], A.col_idx.begin() + A.row_ptr[8]) ==
        std::vector<index_t>{1, 6, 7, 8, 13});
  CHECK(diagonal(A) == std::vector<double>(36, 4.0));
}

TEST_CASE("gen:poisson3d is the 7-point Laplacian") {
  const CsrMatrix<double> A = generate_matrix("gen:poisson3d:4");
  CHECK(A.rows == 64);
  CHECK(A.nnz() == 7 * 64 - 6 * 16);
  CHECK(row_length_range(A) == std::pair<index_t, index_t>{4, 7});
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  CHECK(diagonal(A) == std::vector<double>(64, 6.0));
}

TEST_CASE("gen:poisson3d:NX:NY:NZ is the 7-point Laplacian of a box, x fastest") {
  CHECK(generate_matrix("gen:poisson3d:4:4:4").col_idx ==
        generate_matrix("gen:poisson3d:4").col_idx);
  const CsrMatrix<double> A = generate_matrix("gen:poisson3d:3:4:5");
  CHECK(A.rows == 60);
  CHECK(A.nnz() == 7 * 60 - 2 * (4 * 5 + 3 * 5 + 3 * 4));  // each face drops one neighbour
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  // The interior point (x, y, z) = (1, 1, 1) is row (1 * 4 + 1) * 3 + 1 = 16: neighbours 16 -+ 1,
  // -+ 3 (y), -+ 12 (z).
  CHECK(
      std::vector<index_t>(A.col_idx.begin() + A.row_ptr[16], A.col_idx.begin() + A.row_ptr[17]) ==
      std::vector<index_t>{4, 13, 15, 16, 17, 19, 28});
  // A slab of rows generated alone is the same rows of the whole.
  const CsrMatrix<double> slab = *generate_matrix_rows("gen:poisson3d:3:4:5", 24, 12);
  CHECK(std::vector<index_t>(slab.col_idx) ==
        std::vector<index_t>(A.col_idx.begin() + A.row_ptr[24], A.col_idx.begin() + A.row_ptr[36]));
}

TEST_CASE("gen:banded has 2B + 1 entries in its interior rows") {
  const CsrMatrix<double> A = generate_matrix("gen:banded:50:3");
  CHECK(A.rows == 50);
  CHECK(A.nnz() == 50 * 7 - 3 * 4);
  CHECK(row_length_range(A) == std::pair<index_t, index_t>{4, 7});
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  CHECK(generate_matrix("gen:banded:5:0").nnz() == 5);  // B = 0: the diagonal alone
}

TEST_CASE("gen:powerlaw is SPD with a few very long rows, reproducible from its seed") {
  const CsrMatrix<double> A = generate_matrix("gen:powerlaw:400:7");
  CHECK(A.rows == 400);
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  const double mean = double(A.nnz()) / A.rows;
  CHECK(mean > 3);
  CHECK(mean < 10);
  CHECK(row_length_range(A).second > 8 * mean);  // power law: hubs far above the mean
  CHECK(row_length_range(A).first >= 1);         // every row keeps its diagonal

  CHECK(same(A, generate_matrix("gen:powerlaw:400:7")));
  CHECK_FALSE(same(A, generate_matrix("gen:powerlaw:400:8")));
  CHECK(same(generate_matrix("gen:powerlaw:400"), generate_matrix("gen:powerlaw:400:1")));
}

TEST_CASE("gen:powerlaw at benchmark size stays diagonally dominant") {
  const CsrMatrix<double> A = generate_matrix("gen:powerlaw:20000:3");
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  // Strictly dominant by the 0.1 shift in every row: SPD without needing connectivity.
  for (index_t r = 0; r < A.rows; ++r) {
    double diag = 0, off = 0;
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      (A.col_idx[k] == r ? diag : off) += std::abs(A.values[k]);
    REQUIRE(diag >= off + 0.1 - 1e-9);
  }
}

TEST_CASE("gen:waternet is a planar-like network with 2-6 nonzeros a row") {
  const CsrMatrix<double> A = generate_matrix("gen:waternet:500:3");
  CHECK(A.rows == 500);
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(cholesky_succeeds(A));
  CHECK(row_length_range(A).first >= 2);
  CHECK(row_length_range(A).second <= 6);

  CHECK(same(A, generate_matrix("gen:waternet:500:3")));
  CHECK_FALSE(same(A, generate_matrix("gen:waternet:500:4")));
}

TEST_CASE("gen:waternet at water-network scale: row lengths like EPANET's, SPD by dominance") {
  const CsrMatrix<double> A = generate_matrix("gen:waternet:15000");
  CHECK(A.rows == 15000);
  CHECK(well_formed(A));
  CHECK(symmetric(A));
  CHECK(row_length_range(A).first == 2);
  CHECK(row_length_range(A).second == 6);
  const double mean = double(A.nnz()) / A.rows;
  CHECK(mean > 3.0);  // EPANET's Exnet: 3.55, BWSN 2: 3.29
  CHECK(mean < 4.0);
  CHECK(irreducibly_diagonally_dominant(A));
}

TEST_CASE("gen:waternet's loops and decades: a tree with few loops, conductances spread wide") {
  // loops = 0: the spanning tree alone, n - 1 edges (2 entries each) besides the diagonal; the
  // defaults (20, 2) are the three-argument spec's matrix.
  const CsrMatrix<double> tree = generate_matrix("gen:waternet:2000:5:0:2");
  CHECK(tree.nnz() == 2000 + 2 * 1999);
  CHECK(same(generate_matrix("gen:waternet:2000:5"), generate_matrix("gen:waternet:2000:5:20:2")));
  // 2% loops, six decades: a few more edges than a tree, off-diagonal magnitudes spanning more
  // than four decades (log-uniform over six), still SPD by dominance.
  const CsrMatrix<double> A = generate_matrix("gen:waternet:5000:1:2:6");
  CHECK(A.nnz() > 5000 + 2 * 4999);
  CHECK(A.nnz() < 5000 + 2 * 4999 + 2 * 400);
  double low = 1e300, high = 0;
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] != i)
        low = std::min(low, -A.values[k]), high = std::max(high, -A.values[k]);
  CHECK(low > 0.9e-3);
  CHECK(high < 1.1e3);
  CHECK(high / low > 1e4);
  CHECK(symmetric(A));
  CHECK(irreducibly_diagonally_dominant(A));
  for (const std::string spec : {"gen:waternet:100:1:101", "gen:waternet:100:1:20:31",
                                 "gen:waternet:100:1:20:2:9"})
    CHECK_THROWS_AS(generate_matrix(spec), InputError);
}

TEST_CASE("Generators reject bad specs and list the valid ones") {
  for (const std::string spec :
       {"gen:", "gen:poisson2d", "gen:poisson2d:0", "gen:poisson2d:-3", "gen:poisson2d:3x",
        "gen:poisson2d:3:4", "gen:poisson4d:3", "gen:banded:10", "gen:banded:10:10",
        "gen:waternet:1", "gen:waternet:100:seed", "gen:powerlaw:10:1:2", "gen:poisson3d:2000",
        "gen:poisson3d:3:4", "gen:poisson3d:0:4:4", "gen:poisson3d:2000:2000:600",
        "gen:poisson2d:99999999999999999999", "poisson2d:3"}) {
    CAPTURE(spec);
    try {
      (void)generate_matrix(spec);
      FAIL("accepted");
    } catch (const InputError& e) {
      const std::string message = e.what();
      CHECK(message.find(spec) != std::string::npos);
      CHECK(message.find("gen:waternet:N[:seed[:loops[:decades]]]") != std::string::npos);
    }
  }
}

TEST_CASE("load_matrix takes a generator spec or a Matrix Market file") {
  CHECK(is_generator_spec("gen:poisson2d:3"));
  CHECK_FALSE(is_generator_spec("data/gen:x.mtx"));
  CHECK(same(load_matrix("gen:poisson2d:3"), generate_matrix("gen:poisson2d:3")));
  const std::string file = CGSOLVE_SOURCE_DIR "/data/matrices/nos6.mtx";
  CHECK(same(load_matrix(file), read_matrix_market(file)));
  CHECK_THROWS_AS(load_matrix("gen:nothing:1"), InputError);
}

TEST_CASE("generate_matrix_rows: the stencils' rows by range equal the whole matrix's rows") {
  for (const char* spec : {"gen:poisson2d:9", "gen:poisson3d:5", "gen:banded:40:3"}) {
    CAPTURE(spec);
    const CsrMatrix<double> A = generate_matrix(spec);
    for (index_t first : {0, 1, 17, A.rows - 1, A.rows}) {
      for (index_t count : {0, 1, 13, A.rows}) {
        CAPTURE(first);
        CAPTURE(count);
        const std::optional<CsrMatrix<double>> rows = generate_matrix_rows(spec, first, count);
        REQUIRE(rows.has_value());
        const index_t expected = std::min(count, A.rows - first);
        REQUIRE(rows->rows == expected);
        CHECK(rows->cols == A.cols);
        for (index_t i = 0; i < expected; ++i) {
          const index_t g = first + i;
          REQUIRE(rows->row_length(i) == A.row_length(g));
          for (index_t k = 0; k < A.row_length(g); ++k) {
            CHECK(rows->col_idx[rows->row_ptr[i] + k] == A.col_idx[A.row_ptr[g] + k]);
            CHECK(rows->values[rows->row_ptr[i] + k] == A.values[A.row_ptr[g] + k]);
          }
        }
      }
    }
  }
  // The random graphs' rows depend on the whole graph: no rows by range.
  CHECK_FALSE(generate_matrix_rows("gen:powerlaw:100", 0, 10).has_value());
  CHECK_FALSE(generate_matrix_rows("gen:waternet:100", 0, 10).has_value());
  CHECK_THROWS_AS(generate_matrix_rows("gen:poisson2d:x", 0, 1), InputError);
}
