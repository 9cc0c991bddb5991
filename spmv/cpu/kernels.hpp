// CPU SpMV kernels over a range of rows (or hacks, or entries), shared by the serial backends
// (one call over everything) and the OpenMP backends (one call per thread's share).
// Kept free of OpenMP so that the serial build is plain loops.
#pragma once

#include <algorithm>

#include "formats/coo.hpp"
#include "formats/csr.hpp"
#include "formats/ell.hpp"
#include "formats/hll.hpp"

namespace cgs::cpu {

template <typename T>
void csr_rows(const CsrMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  const index_t* row_ptr = A.row_ptr.data();
  const index_t* col = A.col_idx.data();
  const T* val = A.values.data();
  for (index_t r = first; r < last; ++r) {
    double sum = 0;  // double also for float data, as on the GPU: long rows keep their digits
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += double(val[k]) * x[col[k]];
    y[r] = T(sum);
  }
}

// Entries [first, last) of a row-sorted COO matrix; the range must start and end at row
// boundaries so that no other caller writes the same y entries. Rows in the range that have
// no entry get 0.
template <typename T>
void coo_entries(const CooMatrix<T>& A, const T* x, T* y, index_t first_row, index_t last_row,
                 index_t first, index_t last) {
  std::fill(y + first_row, y + last_row, T(0));
  const index_t* row = A.row_idx.data();
  const index_t* col = A.col_idx.data();
  const T* val = A.values.data();
  for (index_t k = first; k < last;) {  // one run of entries per row, summed in double
    const index_t r = row[k];
    double sum = 0;
    for (; k < last && row[k] == r; ++k) sum += double(val[k]) * x[col[k]];
    y[r] = T(sum);
  }
}

// Rows are taken in blocks; within a block the loop walks the column-major slots slot by slot
// (contiguous in memory) up to the block's longest row. Padding holds 0 with a valid column,
// so the short rows of a block need no test.
template <typename T>
void ell_rows(const EllMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  constexpr index_t kBlock = 64;
  double sum[kBlock];
  for (index_t start = first; start < last; start += kBlock) {
    const index_t count = std::min(kBlock, last - start);
    const index_t width =
        *std::max_element(A.row_length.begin() + start, A.row_length.begin() + start + count);
    std::fill(sum, sum + count, 0.0);
    for (index_t j = 0; j < width; ++j) {
      const T* val = A.values.data() + A.slot(start, j);
      const index_t* col = A.col_idx.data() + A.slot(start, j);
      for (index_t i = 0; i < count; ++i) sum[i] += double(val[i]) * x[col[i]];
    }
    std::copy(sum, sum + count, y + start);
  }
}

// The row-range kernels by format, for code that works on either.
template <typename T>
void multiply_rows(const CsrMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  csr_rows(A, x, y, first, last);
}
template <typename T>
void multiply_rows(const EllMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  ell_rows(A, x, y, first, last);
}

// Hacks [first, last): each a column-major block of hack_size rows and its own width.
template <typename T>
void hll_hacks(const HllMatrix<T>& A, const T* x, T* y, index_t first, index_t last,
               double* scratch /* hack_size entries */) {
  const index_t size = A.hack_size;
  for (index_t h = first; h < last; ++h) {
    std::fill(scratch, scratch + size, 0.0);
    const T* val = A.values.data() + A.hack_offset[h];
    const index_t* col = A.col_idx.data() + A.hack_offset[h];
    for (index_t j = 0; j < A.hack_width[h]; ++j, val += size, col += size)
      for (index_t i = 0; i < size; ++i) scratch[i] += double(val[i]) * x[col[i]];
    const index_t row0 = h * size, rows = std::min(size, A.rows - row0);
    std::copy(scratch, scratch + rows, y + row0);
  }
}

}  // namespace cgs::cpu
