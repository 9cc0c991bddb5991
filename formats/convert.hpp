// Conversions between formats. CSR is the hub: every format is built from it.
#pragma once

#include "formats/coo.hpp"
#include "formats/csr.hpp"
#include "formats/ell.hpp"
#include "formats/hll.hpp"

namespace cgs {

// Builds CSR from unsorted triplets: sorts by (row, column) and sums duplicates.
template <typename T>
CsrMatrix<T> csr_from_triplets(index_t rows, index_t cols, std::vector<index_t> row_idx,
                               std::vector<index_t> col_idx, std::vector<T> values);

template <typename T>
CooMatrix<T> to_coo(const CsrMatrix<T>& A);
template <typename T>
EllMatrix<T> to_ell(const CsrMatrix<T>& A);
// tail_from: rows longer than it keep the rest of their entries in the HYB tail (formats/hll.hpp);
// kNoHllTail: none. formats/stats.hpp's choose_hll_tail picks it from the row lengths.
// sigma > 0: rows stored sorted by descending length inside windows of sigma rows (SELL-C-sigma,
// formats/hll.hpp), a multiple of hack_size; 0: the rows' own order. The tail is cut on
// the sorted hacks. formats/stats.hpp's choose_hll_sigma picks it from the row lengths.
template <typename T>
HllMatrix<T> to_hll(const CsrMatrix<T>& A, index_t hack_size, index_t tail_from = kNoHllTail,
                    index_t sigma = 0);
// The SELL-C-sigma storage order: slot -> row, rows sorted by descending length inside each
// window of sigma rows, stable (equal lengths keep their order). Empty where that order is the
// identity (sigma 0 or 1, or rows already sorted).
template <typename T>
std::vector<index_t> sigma_order(const CsrMatrix<T>& A, index_t sigma);

// New values, same sparsity pattern, for a matrix converted from CSR: csr_values[k] is entry k of
// the CSR matrix it was built from (padding keeps its zeros). No allocation: what set_values()
// of a backend does between the Newton trials of a network.
template <typename T>
void assign_values(CsrMatrix<T>& A, const T* csr_values);
template <typename T>
void assign_values(CooMatrix<T>& A, const T* csr_values);
template <typename T>
void assign_values(EllMatrix<T>& A, const T* csr_values);
template <typename T>
void assign_values(HllMatrix<T>& A, const T* csr_values);

// A's pattern (sizes, row pointers, columns) with no values yet, of another value type maybe.
template <typename To, typename From>
CsrMatrix<To> same_pattern(const CsrMatrix<From>& A) {
  CsrMatrix<To> B;
  B.rows = A.rows;
  B.cols = A.cols;
  B.row_ptr = A.row_ptr;
  B.col_idx = A.col_idx;
  return B;
}

// Same matrix with values cast to another precision (double -> float for --precision float).
template <typename To, typename From>
CsrMatrix<To> cast_values(const CsrMatrix<From>& A) {
  CsrMatrix<To> B = same_pattern<To>(A);
  B.values.assign(A.values.begin(), A.values.end());
  return B;
}

template <typename T>
CsrMatrix<T> transpose(const CsrMatrix<T>& A);

// Where A differs from its transpose by more than `relative_tol` * max|A| (structurally or in
// value): returns false and sets row/col (0-based) of one such entry; true when symmetric.
bool is_symmetric(const CsrMatrix<double>& A, double relative_tol, index_t* row, index_t* col);

// Dense copy (row-major), for tests and small reference products only.
template <typename T>
std::vector<T> to_dense(const CsrMatrix<T>& A);

// Row i's diagonal: its diagonal entries summed in row order (0 where it has none).
template <typename T>
T diagonal_entry(const CsrMatrix<T>& A, index_t i) {
  T d = 0;
  for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
    if (A.col_idx[k] == i) d += A.values[k];
  return d;
}

// The main diagonal (0 where a row has no diagonal entry).
template <typename T>
std::vector<T> diagonal(const CsrMatrix<T>& A);

}  // namespace cgs
