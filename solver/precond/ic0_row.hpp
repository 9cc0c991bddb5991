// One row of IC(0)'s factorisation, written once for the host's sweeps and pipeline
// (solver/precond/ic0.cpp) and the device's level-by-level kernels (solver/precond/ic0_gpu.cu),
// so that both give the same factor bit for bit: each operation rounded as the host rounds it
// (base/rounded.hpp), and on the device the rows j < i that another thread finished before the
// last grid sync read past L1 (__ldcg).
#pragma once

#include <cmath>

#include "base/host_device.hpp"
#include "base/rounded.hpp"
#include "formats/types.hpp"

namespace cgs::precond {

// L's off-diagonal part in CSR (the pattern of A below the diagonal) and its diagonal,
// factorised in place.
struct Ic0Factor {
  const index_t* row_ptr;
  const index_t* col_idx;
  double* values;  // A's entries on entry, L's on return
  double* pivot;   // A's diagonal on entry, L's on return (row by row)
};

// A value another thread wrote: a finished row j < i, read past L1 on the device.
CGS_HD double ic0_finished(const double* p) {
#if defined(__CUDA_ARCH__)
  return __ldcg(p);
#else
  return *p;
#endif
}

// Row i of A into the factor: its entries below the diagonal into `lower_values` (row i of L
// holds row i of A's lower triangle: the same columns in the same order), A(i, i) into pivot[i].
CGS_HD void ic0_load_row(const index_t* a_ptr, const index_t* a_cols, const double* a_values,
                         index_t i, double* lower_values, double* pivot) {
  index_t at = 0;
  for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
    if (a_cols[k] < i)
      lower_values[at++] = a_values[k];
    else if (a_cols[k] == i)
      pivot[i] = a_values[k];
  }
}

// Row i of L from the rows before it: L(i,j) = (A(i,j) - sum_{m<j} L(i,m) L(j,m)) / L(j,j) over
// the common columns m, then L(i,i) = sqrt(A(i,i) (1 + alpha) - sum_j L(i,j)^2). False when that
// is not positive and finite. Reads only rows j < i that have an entry in row i, which must be
// finished.
CGS_HD bool ic0_factorize_row(const Ic0Factor& f, index_t i, double alpha) {
  using rounded::add, rounded::div, rounded::mul, rounded::sub;
  const index_t first = f.row_ptr[i], end = f.row_ptr[i + 1];
  double pivot = mul(f.pivot[i], add(1.0, alpha));
  for (index_t k = first; k < end; ++k) {
    const index_t j = f.col_idx[k];
    double sum = f.values[k];
    index_t a = first, b = f.row_ptr[j];
    const index_t b_end = f.row_ptr[j + 1];
    while (a < k && b < b_end) {
      const index_t ca = f.col_idx[a], cb = f.col_idx[b];
      if (ca < cb) {
        ++a;
      } else if (ca > cb) {
        ++b;
      } else {
        sum = sub(sum, mul(f.values[a], ic0_finished(f.values + b)));
        ++a;
        ++b;
      }
    }
    const double l = div(sum, ic0_finished(f.pivot + j));
    f.values[k] = l;
    pivot = sub(pivot, mul(l, l));
  }
  if (!(pivot > 0) || !(pivot <= 1.7976931348623157e308)) return false;  // also NaN and +inf
  f.pivot[i] = rounded::sqrt(pivot);
  return true;
}

}  // namespace cgs::precond
