// CPU SpMV kernels over a range of rows (or hacks), shared by the serial backends (one call over
// everything), the OpenMP backends (one call per thread's share) and the fused CPU CG loops
// (solver/fused_cpu_passes.hpp). Kept free of OpenMP so that the serial build is plain loops.
//
// Each format's row loop is written once, as a *_row_blocks function: `value(j)` gives entry j of
// the vector being multiplied (x[j] for a plain product; the fused CG loops compute p_j on the
// fly) and finish(first, count, sums) receives the products of rows [first, first + count),
// summed in double (also for float data, as on the GPU: long rows keep their digits). A block
// holds at most kRowBlock rows. Every row of the range is finished, empty rows with 0.
#pragma once

#include <algorithm>

#include "formats/coo.hpp"
#include "formats/csr.hpp"
#include "formats/ell.hpp"
#include "formats/hll.hpp"

namespace cgs::cpu {

constexpr index_t kRowBlock = 64;

template <typename T, typename Value, typename Finish>
void csr_row_blocks(const CsrMatrix<T>& A, index_t first, index_t last, Value value,
                    Finish finish) {
  const index_t* row_ptr = A.row_ptr.data();
  const index_t* col = A.col_idx.data();
  const T* val = A.values.data();
  double sum[kRowBlock];
  for (index_t start = first; start < last; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last - start);
    for (index_t i = 0; i < count; ++i) {
      double s = 0;
      for (index_t k = row_ptr[start + i]; k < row_ptr[start + i + 1]; ++k)
        s += double(val[k]) * value(col[k]);
      sum[i] = s;
    }
    finish(start, count, sum);
  }
}

// Rows [first_row, last_row) of a row-sorted COO matrix, whose entries start at first_entry.
template <typename T, typename Value, typename Finish>
void coo_row_blocks(const CooMatrix<T>& A, index_t first_row, index_t last_row, index_t first_entry,
                    Value value, Finish finish) {
  const index_t* row = A.row_idx.data();
  const index_t* col = A.col_idx.data();
  const T* val = A.values.data();
  const index_t end = A.nnz();
  double sum[kRowBlock];
  index_t k = first_entry;
  for (index_t start = first_row; start < last_row; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last_row - start);
    for (index_t i = 0; i < count; ++i) {  // one run of entries per row
      double s = 0;
      for (; k < end && row[k] == start + i; ++k) s += double(val[k]) * value(col[k]);
      sum[i] = s;
    }
    finish(start, count, sum);
  }
}

// Within a block the loop walks the column-major slots slot by slot (contiguous in memory) up to
// the block's longest row. Padding holds 0 with a valid column, so short rows need no test.
template <typename T, typename Value, typename Finish>
void ell_row_blocks(const EllMatrix<T>& A, index_t first, index_t last, Value value,
                    Finish finish) {
  double sum[kRowBlock];
  for (index_t start = first; start < last; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last - start);
    const index_t width =
        *std::max_element(A.row_length.begin() + start, A.row_length.begin() + start + count);
    std::fill(sum, sum + count, 0.0);
    for (index_t j = 0; j < width; ++j) {
      const T* val = A.values.data() + A.slot(start, j);
      const index_t* col = A.col_idx.data() + A.slot(start, j);
      for (index_t i = 0; i < count; ++i) sum[i] += double(val[i]) * value(col[i]);
    }
    finish(start, count, sum);
  }
}

// Hacks [first_hack, last_hack): each a column-major block of hack_size rows and its own width,
// taken kRowBlock rows at a time; the padding rows of the last hack are skipped.
template <typename T, typename Value, typename Finish>
void hll_row_blocks(const HllMatrix<T>& A, index_t first_hack, index_t last_hack, Value value,
                    Finish finish) {
  const index_t size = A.hack_size;
  double sum[kRowBlock];
  for (index_t h = first_hack; h < last_hack; ++h) {
    const index_t row0 = h * size, rows = std::min(size, A.rows - row0);
    for (index_t start = 0; start < rows; start += kRowBlock) {
      const index_t count = std::min(kRowBlock, rows - start);
      std::fill(sum, sum + count, 0.0);
      const T* val = A.values.data() + A.hack_offset[h] + start;
      const index_t* col = A.col_idx.data() + A.hack_offset[h] + start;
      for (index_t j = 0; j < A.hack_width[h]; ++j, val += size, col += size)
        for (index_t i = 0; i < count; ++i) sum[i] += double(val[i]) * value(col[i]);
      finish(row0 + start, count, sum);
    }
  }
}

// The plain products y = A x over a range.
template <typename T>
auto read_from(const T* x) {
  return [x](index_t j) { return x[j]; };
}
template <typename T>
auto store_to(T* y) {
  return [y](index_t first, index_t count, const double* sum) {
    for (index_t i = 0; i < count; ++i) y[first + i] = T(sum[i]);
  };
}

template <typename T>
void csr_rows(const CsrMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  csr_row_blocks(A, first, last, read_from(x), store_to(y));
}

// Rows [first_row, last_row) of a row-sorted COO matrix, whose entries start at first_entry.
template <typename T>
void coo_rows(const CooMatrix<T>& A, const T* x, T* y, index_t first_row, index_t last_row,
              index_t first_entry) {
  coo_row_blocks(A, first_row, last_row, first_entry, read_from(x), store_to(y));
}

template <typename T>
void ell_rows(const EllMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  ell_row_blocks(A, first, last, read_from(x), store_to(y));
}

template <typename T>
void hll_hacks(const HllMatrix<T>& A, const T* x, T* y, index_t first, index_t last) {
  hll_row_blocks(A, first, last, read_from(x), store_to(y));
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

}  // namespace cgs::cpu
