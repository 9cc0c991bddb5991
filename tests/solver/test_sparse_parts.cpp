// transpose_with_map (the restriction R = P^T of AMG, FSAI's G^T, IC(0)'s upper factor) against
// Eigen's transpose: serial below a million entries, split over row blocks of the host's threads
// above, the same At (columns ascending in every row) and a map that puts every entry where
// Eigen's transpose has it.
#include <doctest/doctest.h>
#include <omp.h>

#include <Eigen/SparseCore>

#include "solver/precond/sparse_parts.hpp"
#include "test_matrices.hpp"

using namespace cgs;

namespace {

// A rectangular matrix shaped as AMG's P: n rows, about n / 6 columns, 1-4 entries a row at
// pseudo-random columns (fixed seed), some rows empty.
CsrMatrix<double> prolongator_like(index_t n) {
  const index_t cols = n / 6 + 1;
  CsrMatrix<double> P;
  P.rows = n;
  P.cols = cols;
  P.row_ptr.assign(std::size_t(n) + 1, 0);
  std::uint64_t state = 20261125;
  auto next = [&] {
    return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33;
  };
  for (index_t i = 0; i < n; ++i) {
    const index_t count = index_t(next() % 5);  // 0-4
    index_t c = index_t(next() % std::uint64_t(cols));
    for (index_t e = 0; e < count && c < cols; ++e, c += 1 + index_t(next() % 7)) {
      P.col_idx.push_back(c);
      P.values.push_back(double(next() % 1000) / 7.0 - 50);
    }
    P.row_ptr[std::size_t(i) + 1] = index_t(P.col_idx.size());
  }
  return P;
}

void check_transpose(const CsrMatrix<double>& P) {
  using EigenCsr = Eigen::SparseMatrix<double, Eigen::RowMajor, index_t>;
  const Eigen::Map<const EigenCsr> e(P.rows, P.cols, P.nnz(), P.row_ptr.data(), P.col_idx.data(),
                                     P.values.data());
  const EigenCsr reference = e.transpose();  // row-major: columns ascend in each row
  const precond::Transposed t = precond::transpose_with_map(P);
  REQUIRE(t.At.rows == P.cols);
  REQUIRE(t.At.cols == P.rows);
  CHECK(t.At.row_ptr ==
        std::vector<index_t>(reference.outerIndexPtr(), reference.outerIndexPtr() + P.cols + 1));
  CHECK(t.At.col_idx ==
        std::vector<index_t>(reference.innerIndexPtr(), reference.innerIndexPtr() + P.nnz()));
  CHECK(t.At.values == std::vector<double>(reference.valuePtr(), reference.valuePtr() + P.nnz()));
  bool mapped = true;
  for (index_t k = 0; k < P.nnz(); ++k)
    mapped = mapped && t.At.values[std::size_t(t.position[std::size_t(k)])] == P.values[k];
  CHECK(mapped);
}

}  // namespace

TEST_CASE("transpose_with_map equals Eigen's transpose, serial and over threads") {
  check_transpose(prolongator_like(1000));  // serial
  check_transpose(testing::poisson2d(20));
  const int threads = omp_get_max_threads();
  for (int team : {2, 3}) {  // above a million entries: row blocks, a team of 2 and of 3
    CAPTURE(team);
    omp_set_num_threads(team);
    const CsrMatrix<double> P = prolongator_like(800000);
    REQUIRE(P.nnz() > 1000000);  // the threaded path
    check_transpose(P);
  }
  omp_set_num_threads(threads);
}
