// CPU SpMV row walkers over a range of rows, one per format, shared by the serial backends (one
// call over everything), the OpenMP backends (one call per thread's part) and the fused CPU CG
// loops (solver/fused/). Kept free of OpenMP so that the serial build is plain loops.
//
// walk_rows(view, first, last, value, finish): `value(j)` gives entry j of the vector being
// multiplied (x[j] for a plain product; the fused CG loops compute p_j on the fly) and
// finish(first, count, sums) receives the products of rows [first, first + count), summed in
// double (also for float data, as on the GPU: long rows keep their digits). A block holds at
// most kRowBlock rows. Every row of the range is finished, empty rows with 0. HLL ranges must
// start on a hack boundary (the OpenMP parts do), sorted HLL ranges on a window boundary.
#pragma once

#include <algorithm>
#include <vector>

#include "spmv/views.hpp"

namespace cgs::cpu {

constexpr index_t kRowBlock = 64;

template <typename T, typename Value, typename Finish>
void walk_rows(const CsrView<T>& A, index_t first, index_t last, Value value, Finish finish) {
  double sum[kRowBlock];
  for (index_t start = first; start < last; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last - start);
    for (index_t i = 0; i < count; ++i) {
      double s = 0;
      for (index_t k = A.row_ptr[start + i]; k < A.row_ptr[start + i + 1]; ++k)
        s += double(A.values[k]) * value(A.col_idx[k]);
      sum[i] = s;
    }
    finish(start, count, sum);
  }
}

// COO sorted by row: the range's entries start at row_start[first], and each row is the run of
// entries carrying its row index.
template <typename T, typename Value, typename Finish>
void walk_rows(const CooView<T>& A, index_t first, index_t last, Value value, Finish finish) {
  const index_t end = A.row_start[A.rows];
  double sum[kRowBlock];
  index_t k = A.row_start[first];
  for (index_t start = first; start < last; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last - start);
    for (index_t i = 0; i < count; ++i) {
      double s = 0;
      for (; k < end && A.row_idx[k] == start + i; ++k)
        s += double(A.values[k]) * value(A.col_idx[k]);
      sum[i] = s;
    }
    finish(start, count, sum);
  }
}

// Within a block the loop walks the column-major slots slot by slot (contiguous in memory) up to
// the block's longest row. Padding holds 0 with a valid column, so short rows need no test.
template <typename T, typename Value, typename Finish>
void walk_rows(const EllView<T>& A, index_t first, index_t last, Value value, Finish finish) {
  double sum[kRowBlock];
  for (index_t start = first; start < last; start += kRowBlock) {
    const index_t count = std::min(kRowBlock, last - start);
    const index_t width = *std::max_element(A.row_length + start, A.row_length + start + count);
    std::fill(sum, sum + count, 0.0);
    for (index_t j = 0; j < width; ++j) {
      const offset_t slot = offset_t(j) * A.rows + start;
      const T* val = A.values + slot;
      const index_t* col = A.col_idx + slot;
      for (index_t i = 0; i < count; ++i) sum[i] += double(val[i]) * value(col[i]);
    }
    finish(start, count, sum);
  }
}

// Adds the HYB tail's entries of rows [first, first + count) to their sums: the tail rows of the
// block are found by one binary search, then walked in order.
template <typename T, typename Value>
void add_tail(const HllView<T>& A, index_t first, index_t count, Value& value, double* sum) {
  if (A.tail_count == 0) return;
  const index_t* row = std::lower_bound(A.tail_rows, A.tail_rows + A.tail_count, first);
  for (; row != A.tail_rows + A.tail_count && *row < first + count; ++row) {
    const index_t t = index_t(row - A.tail_rows);
    double s = 0;
    for (index_t k = A.tail_ptr[t]; k < A.tail_ptr[t + 1]; ++k)
      s += double(A.tail_values[k]) * value(A.tail_col_idx[k]);
    sum[*row - first] += s;
  }
}

// Sums of the slots [h * hack_size + start, ... + count) of hack h, tail included.
template <typename T, typename Value>
void hack_sums(const HllView<T>& A, index_t h, index_t start, index_t count, Value& value,
               double* sum) {
  const index_t size = A.hack_size;
  std::fill(sum, sum + count, 0.0);
  const T* val = A.values + A.hack_offset[h] + start;
  const index_t* col = A.col_idx + A.hack_offset[h] + start;
  for (index_t j = 0; j < A.hack_width[h]; ++j, val += size, col += size)
    for (index_t i = 0; i < count; ++i) sum[i] += double(val[i]) * value(col[i]);
  add_tail(A, h * size + start, count, value, sum);
}

// Sorted HLL (SELL-C-sigma): a window's slots hold exactly its rows, so each window's sums are
// put back in row order in a buffer (one per thread, kept between calls) and finished from there
// kRowBlock rows at a time. A range starts on a window boundary or at the end.
template <typename T, typename Value, typename Finish>
void walk_sorted_windows(const HllView<T>& A, index_t first, index_t last, Value value,
                         Finish finish) {
  static thread_local std::vector<double> by_row;
  const index_t size = A.hack_size, sigma = A.sigma;
  double sum[kRowBlock];
  for (index_t w = (first + sigma - 1) / sigma; w < (last + sigma - 1) / sigma; ++w) {
    const index_t row0 = w * sigma, rows = std::min(sigma, A.rows - row0);
    by_row.resize(std::size_t(rows));
    for (index_t s0 = row0; s0 < row0 + rows; s0 += size) {
      const index_t in_hack = std::min(size, row0 + rows - s0);
      for (index_t start = 0; start < in_hack; start += kRowBlock) {
        const index_t count = std::min(kRowBlock, in_hack - start);
        hack_sums(A, s0 / size, start, count, value, sum);
        for (index_t i = 0; i < count; ++i) by_row[A.slot_row[s0 + start + i] - row0] = sum[i];
      }
    }
    for (index_t start = 0; start < rows; start += kRowBlock)
      finish(row0 + start, std::min(kRowBlock, rows - start), by_row.data() + start);
  }
}

// The hacks of rows [first, last): each a column-major block of hack_size rows and its own
// width, taken kRowBlock rows at a time, then the block's tail rows; the padding rows of the
// last hack are skipped. A range starts on a hack boundary or at the end (the OpenMP parts do;
// an empty last part starts at rows, which rounds up to no hack at all); sorted, on a window
// boundary (walk_sorted_windows).
template <typename T, typename Value, typename Finish>
void walk_rows(const HllView<T>& A, index_t first, index_t last, Value value, Finish finish) {
  if (A.slot_row) return walk_sorted_windows(A, first, last, value, finish);
  const index_t size = A.hack_size;
  double sum[kRowBlock];
  for (index_t h = (first + size - 1) / size; h < (last + size - 1) / size; ++h) {
    const index_t row0 = h * size, rows = std::min(size, A.rows - row0);
    for (index_t start = 0; start < rows; start += kRowBlock) {
      const index_t count = std::min(kRowBlock, rows - start);
      hack_sums(A, h, start, count, value, sum);
      finish(row0 + start, count, sum);
    }
  }
}

// The plain product y = A x over rows [first, last).
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

template <typename View, typename T>
void multiply_rows(const View& A, const T* x, T* y, index_t first, index_t last) {
  walk_rows(A, first, last, read_from(x), store_to(y));
}

}  // namespace cgs::cpu
